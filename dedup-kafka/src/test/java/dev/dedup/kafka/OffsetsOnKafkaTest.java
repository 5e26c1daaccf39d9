package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.consumer;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.RecordOutcome.Disposition;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Outcome to offset, on the real broker and PostgreSQL: commit stops before an unfinished record, seek back works. */
class OffsetsOnKafkaTest {
    private final List<String> handled = new CopyOnWriteArrayList<>();
    private final List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();
    private DedupStore store;
    private KafkaProducer<String, String> producer;
    private KafkaConsumer<String, String> consumer;
    private String topic;
    private String group;

    @BeforeEach
    void setUp() throws Exception {
        store = KafkaTestSupport.postgresStore("kafka-offsets-" + unique());
        producer = producer();
        topic = createTopic("offsets", 1);
        group = "offsets-" + unique();
        consumer = consumer(group, 100);
        consumer.subscribe(List.of(topic));
        for (int i = 0; i < 5; i++) {
            send(producer, topic, 0, "m" + i, "v" + i);
        }
    }

    @AfterEach
    void tearDown() {
        consumer.close(Duration.ofSeconds(5));
        producer.close();
        store.close();
    }

    /** The consumer the processor is built on: the real one here, a mutant's in {@link EntryPointMutantsTest}. */
    Consumer<String, String> processorConsumer(KafkaConsumer<String, String> consumer) {
        return consumer;
    }

    /** How the processor settles: one store call per record here, one per batch in the subclass. */
    <R> KafkaRecordProcessor.Builder<String, String, R> settling(
            KafkaRecordProcessor.Builder<String, String, R> builder) {
        return builder;
    }

    private KafkaRecordProcessor.Builder<String, String, String> processor() {
        return settling(KafkaRecordProcessor.builder(processorConsumer(consumer), store, ResultCodec.utf8()))
                .lease(Duration.ofSeconds(10))
                .retryBackoff(Duration.ofMillis(100))
                .deadLetters(deadLetters::add);
    }

    private String handle(ConsumerRecord<String, String> record) {
        handled.add(record.value());
        return "done " + record.value();
    }

    /** Polls until the first poll that returns records. */
    private PollResult<String, String, String> firstBatch(KafkaRecordProcessor<String, String, String> processor,
            dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> handler) {
        for (int i = 0; i < 100; i++) {
            PollResult<String, String, String> result = processor.poll(Duration.ofMillis(500), handler);
            if (!result.outcomes().isEmpty()) {
                return result;
            }
        }
        throw new AssertionError("no records within 100 polls");
    }

    /** Polls until the group has committed {@code offset} on partition 0. */
    private void drainTo(KafkaRecordProcessor<String, String, String> processor, long offset,
            dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> handler) throws Exception {
        for (int i = 0; i < 200; i++) {
            processor.poll(Duration.ofMillis(200), handler);
            if (committed(group, topic).getOrDefault(0, -1L) >= offset) {
                return;
            }
        }
        throw new AssertionError("offset " + offset + " not committed within 200 polls");
    }

    @Test
    @DisplayName("a record in progress elsewhere: commit stops before it, the partition is sought back, the rest waits")
    void inProgressElsewhereStopsTheCommit() throws Exception {
        Claim held = (Claim) store.claim("m2", Duration.ofSeconds(30));
        var processor = processor().build();

        var result = firstBatch(processor, this::handle);

        assertThat(result.outcomes()).extracting(RecordOutcome::disposition)
                .containsExactly(Disposition.DONE, Disposition.DONE, Disposition.REDELIVER);
        assertThat(result.outcomes().get(2).outcome()).isInstanceOf(ProcessingOutcome.InProgressElsewhere.class);
        assertThat(result.offsets().get(new TopicPartition(topic, 0)).offset()).isEqualTo(2);
        assertThat(result.rewound()).containsEntry(new TopicPartition(topic, 0), 2L);
        assertThat(committed(group, topic)).containsEntry(0, 2L);
        assertThat(handled).containsExactly("v0", "v1");

        // The other owner finishes its work: the redelivery finds m2 done, and m3, m4 run, each once.
        store.complete(held, Duration.ofMinutes(5), "elsewhere".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        drainTo(processor, 5, this::handle);
        assertThat(handled).containsExactly("v0", "v1", "v3", "v4");
    }

    @Test
    @DisplayName("a retryable failure: commit stops before the record, which comes again and then succeeds")
    void retryableFailureIsRedelivered() throws Exception {
        AtomicInteger attemptsOnM1 = new AtomicInteger();
        var processor = processor().build();
        dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> flaky = record -> {
            if (record.value().equals("v1") && attemptsOnM1.incrementAndGet() == 1) {
                throw new IllegalArgumentException("temporary");
            }
            return handle(record);
        };

        var result = firstBatch(processor, flaky);

        assertThat(result.outcomes()).hasSize(2);
        assertThat(result.outcomes().get(1).outcome()).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.keyKept()).isFalse());
        assertThat(committed(group, topic)).containsEntry(0, 1L);

        drainTo(processor, 5, flaky);
        assertThat(attemptsOnM1).hasValue(2);
        assertThat(handled).containsExactly("v0", "v1", "v2", "v3", "v4");
    }

    @Test
    @DisplayName("a kept failure goes to the dead letters and is committed past; its republish is AlreadyFailed")
    void keptFailureIsDeadLettered() throws Exception {
        var processor = processor().keepKeyOn(e -> e instanceof IllegalStateException).build();
        dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> rejecting = record -> {
            if (record.value().equals("v1")) {
                throw new IllegalStateException("declined");
            }
            return handle(record);
        };

        drainTo(processor, 5, rejecting);
        send(producer, topic, 0, "m1", "v1-again");
        drainTo(processor, 6, rejecting);

        assertThat(handled).containsExactly("v0", "v2", "v3", "v4");
        assertThat(deadLetters).extracting(DeadLetter::reason)
                .containsExactly(DeadLetter.Reason.FAILED, DeadLetter.Reason.ALREADY_FAILED);
        assertThat(deadLetters.get(1).error()).hasValueSatisfying(error -> assertThat(error).contains("declined"));
        assertThat(deadLetters.get(1).record().value()).isEqualTo("v1-again");
    }

    @Test
    @DisplayName("a dead letter that cannot be stored rewinds to its record; the next delivery hands it over again")
    void failedDeadLetterRewinds() throws Exception {
        AtomicInteger deadLetterAttempts = new AtomicInteger();
        var processor = processor().keepKeyOn(e -> true).deadLetters(letter -> {
            if (deadLetterAttempts.incrementAndGet() == 1) {
                throw new java.io.IOException("dead-letter store down");
            }
            deadLetters.add(letter);
        }).build();
        dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> rejectingM3 = record -> {
            if (record.value().equals("v3")) {
                throw new IllegalStateException("declined");
            }
            return handle(record);
        };

        var result = firstBatch(processor, rejectingM3);

        assertThat(result.rewound()).containsEntry(new TopicPartition(topic, 0), 3L);
        assertThat(committed(group, topic)).containsEntry(0, 3L);
        drainTo(processor, 5, rejectingM3);
        assertThat(deadLetters).extracting(DeadLetter::reason).containsExactly(DeadLetter.Reason.ALREADY_FAILED);
        assertThat(handled).containsExactly("v0", "v1", "v2", "v4");
    }

    @Test
    @DisplayName("an Error from the handler mid-batch: the partition is sought back, every record runs once, and no"
            + " commit passes a record that never ran")
    void errorFromTheHandlerSeeksBack() throws Exception {
        AtomicInteger errors = new AtomicInteger();
        var processor = processor().build();
        dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> buggyOnce = record -> {
            if (record.value().equals("v2") && errors.getAndIncrement() == 0) {
                throw new AssertionError("a bug in the handler");
            }
            return handle(record);
        };

        for (int i = 0; i < 100 && committed(group, topic).getOrDefault(0, 0L) < 6; i++) {
            try {
                processor.poll(Duration.ofMillis(200), buggyOnce);
            } catch (Throwable e) {     // the user's loop survives the Error and polls again
                assertThat(e).isInstanceOf(AssertionError.class);
                send(producer, topic, 0, "m5", "v5");     // a record after the batch, as traffic goes on
            }
            assertThat(committed(group, topic).getOrDefault(0, 0L)).as("committed offset, never past a record that"
                    + " never ran (handled: %s)", handled).isLessThanOrEqualTo(firstUnhandled());
        }

        assertThat(errors).hasValue(2);
        assertThat(handled).containsExactly("v0", "v1", "v2", "v3", "v4", "v5");
        assertThat(committed(group, topic)).isEqualTo(Map.of(0, 6L));
    }

    @Test
    @DisplayName("an Error from the dead-letter handler: the partition is sought back to that record, which is"
            + " dead-lettered on the next poll; the records after it ran once")
    void errorFromTheDeadLetterHandlerSeeksBack() throws Exception {
        AtomicInteger deadLetterCalls = new AtomicInteger();
        var processor = processor().keepKeyOn(e -> true).deadLetters(letter -> {
            if (deadLetterCalls.incrementAndGet() == 1) {
                throw new StackOverflowError("a bug in the dead-letter handler");
            }
            deadLetters.add(letter);
        }).build();
        dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> rejectingV1 = record -> {
            if (record.value().equals("v1")) {
                throw new IllegalStateException("declined");
            }
            return handle(record);
        };

        long errors = 0;
        for (int i = 0; i < 100 && committed(group, topic).getOrDefault(0, 0L) < 5; i++) {
            try {
                processor.poll(Duration.ofMillis(200), rejectingV1);
            } catch (StackOverflowError e) {
                errors++;
            }
            assertThat(committed(group, topic).getOrDefault(0, 0L)).as("never past the record not dead-lettered")
                    .isLessThanOrEqualTo(deadLetters.isEmpty() ? 1L : 5L);
        }

        assertThat(errors).isEqualTo(1);
        assertThat(deadLetters).extracting(letter -> letter.record().value()).containsExactly("v1");
        assertThat(handled).containsExactly("v0", "v2", "v3", "v4");
        assertThat(committed(group, topic)).isEqualTo(Map.of(0, 5L));
    }

    @Test
    @DisplayName("maxAttempts: a record whose handler always fails runs that many times, then is dead-lettered as"
            + " FAILED and committed past; its republish is AlreadyFailed")
    void maxAttemptsDeadLettersTheRecord() throws Exception {
        AtomicInteger attemptsOnV1 = new AtomicInteger();
        var processor = processor().maxAttempts(3).build();
        dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> alwaysFailingV1 = record -> {
            if (record.value().equals("v1")) {
                attemptsOnV1.incrementAndGet();
                throw new IllegalArgumentException("a bug that no retry fixes");
            }
            return handle(record);
        };

        drainTo(processor, 5, alwaysFailingV1);
        send(producer, topic, 0, "m1", "v1-again");
        drainTo(processor, 6, alwaysFailingV1);

        assertThat(attemptsOnV1).hasValue(3);
        assertThat(handled).containsExactly("v0", "v2", "v3", "v4");
        assertThat(deadLetters).extracting(DeadLetter::reason)
                .containsExactly(DeadLetter.Reason.FAILED, DeadLetter.Reason.ALREADY_FAILED);
        assertThat(deadLetters.get(0).cause()).containsInstanceOf(IllegalArgumentException.class);
        assertThat(deadLetters.get(1).error()).hasValueSatisfying(error -> assertThat(error).contains("no retry"));
    }

    @Test
    @DisplayName("maxAttempts: a store failure before the handler ran is not an attempt")
    void storeFailureIsNotAnAttempt() throws Exception {
        WatchedStore watched = new WatchedStore(store);
        var processor = settling(KafkaRecordProcessor.builder(consumer, watched, ResultCodec.utf8()))
                .retryBackoff(Duration.ofMillis(100))
                .deadLetters(deadLetters::add)
                .maxAttempts(2)
                .build();
        AtomicInteger attemptsOnV1 = new AtomicInteger();
        dev.dedup.MessageHandler<ConsumerRecord<String, String>, String> failingV1Once = record -> {
            if (record.value().equals("v1") && attemptsOnV1.incrementAndGet() == 1) {
                throw new IllegalArgumentException("temporary");
            }
            return handle(record);
        };

        watched.kill();
        int storeFailures = 0;
        for (int i = 0; i < 100 && storeFailures < 3; i++) {
            storeFailures += (int) processor.poll(Duration.ofMillis(200), failingV1Once)
                    .count(ProcessingOutcome.Failed.class);
        }
        assertThat(storeFailures).as("claims that failed in the store").isEqualTo(3);
        watched.revive();
        drainTo(processor, 5, failingV1Once);

        assertThat(attemptsOnV1).hasValue(2);
        assertThat(handled).containsExactly("v0", "v1", "v2", "v3", "v4");
        assertThat(deadLetters).isEmpty();
    }

    /** The offset of the first record (v0 is at 0, v1 at 1, ...) whose handler has not run. */
    private long firstUnhandled() {
        long offset = 0;
        while (handled.contains("v" + offset)) {
            offset++;
        }
        return offset;
    }

    @Test
    @DisplayName("commitOffsets(false): nothing is committed, the offsets are returned for the caller to commit")
    void callerCommits() throws Exception {
        var processor = processor().commitOffsets(false).build();

        var result = firstBatch(processor, this::handle);

        assertThat(result.offsets()).containsOnlyKeys(new TopicPartition(topic, 0));
        assertThat(committed(group, topic)).isEmpty();
        consumer.commitSync(result.offsets());
        assertThat(committed(group, topic)).isEqualTo(Map.of(0, 5L));
    }

    @Test
    @DisplayName("a record held elsewhere on a partition the group took away meanwhile: no rewind, no error, and"
            + " nothing committed past it, so its new owner reads it again")
    void revokedPartitionIsNotRewound() throws Exception {
        Claim held = (Claim) store.claim("m0", Duration.ofSeconds(30));
        KafkaRecordProcessor<String, String, String> processor = processor().commitOffsets(false).build();
        // Records of a partition this consumer does not own (as after a revocation): seeking it would throw.
        TopicPartition other = new TopicPartition(topic, 1);
        ConsumerRecord<String, String> record = new ConsumerRecord<>(topic, 1, 7, "k", "v0");
        record.headers().add(RecordKeys.DEFAULT_HEADER, "m0".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        var records = new org.apache.kafka.clients.consumer.ConsumerRecords<>(Map.of(other, List.of(record)),
                Map.of());

        PollResult<String, String, String> result = processor.process(records, this::handle);

        assertThat(result.outcomes()).singleElement().satisfies(outcome -> assertThat(outcome.outcome())
                .isInstanceOf(ProcessingOutcome.InProgressElsewhere.class));
        assertThat(result.offsets()).as("nothing committed past the held record").isEmpty();
        assertThat(handled).isEmpty();
        assertThat(consumer.paused()).doesNotContain(other);
        store.release(held);
    }
}
