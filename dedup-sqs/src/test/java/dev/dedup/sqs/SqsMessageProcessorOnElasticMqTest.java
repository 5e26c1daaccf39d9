package dev.dedup.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.sqs.MessageOutcome.Disposition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

/** The receive loop's settlement of every outcome, on ElasticMQ (an SQS-compatible server, not Amazon SQS). */
class SqsMessageProcessorOnElasticMqTest {
    private final InMemoryDedupStore store = new InMemoryDedupStore();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closing) {
            closeable.close();
        }
        store.close();
    }

    private SqsFixture fixture(int maxReceiveCount) {
        SqsFixture fixture = SqsFixture.standard(maxReceiveCount);
        closing.add(fixture);
        return fixture;
    }

    private <R> SqsMessageProcessor<R> open(SqsMessageProcessor.Builder<R> builder) {
        SqsMessageProcessor<R> processor = builder.build();
        closing.add(0, processor);
        return processor;
    }

    private SqsMessageProcessor.Builder<String> builder(SqsFixture fixture) {
        return SqsMessageProcessor.builder(fixture.sqs, fixture.queue, store, ResultCodec.utf8())
                .keys(SqsKeys.messageAttribute(SqsFixture.KEY_ATTRIBUTE))
                .retryBackoff(Duration.ofSeconds(1), Duration.ofSeconds(1));
    }

    /** Polls until {@code count} outcomes came back or {@code within} passed. */
    private static <R> List<MessageOutcome<R>> pollFor(SqsMessageProcessor<R> processor, int count,
            Duration within, dev.dedup.MessageHandler<Message, R> handler) {
        List<MessageOutcome<R>> outcomes = new ArrayList<>();
        long end = System.nanoTime() + within.toNanos();
        while (outcomes.size() < count && System.nanoTime() < end) {
            outcomes.addAll(processor.poll(Duration.ofSeconds(1), handler));
        }
        return outcomes;
    }

    @Test
    @DisplayName("Processed and AlreadyProcessed are deleted: a second send of one key runs nothing and leaves nothing")
    void processedAndDuplicatesAreDeleted() {
        SqsFixture fixture = fixture(5);
        SqsMessageProcessor<String> processor = open(builder(fixture));
        fixture.send("order-1", "first");
        fixture.send("order-1", "again");
        List<String> ran = new ArrayList<>();

        List<MessageOutcome<String>> outcomes = pollFor(processor, 2, Duration.ofSeconds(5), message -> {
            ran.add(message.body());
            return "reserved " + message.body();
        });

        assertThat(ran).hasSize(1);
        assertThat(outcomes).extracting(MessageOutcome::disposition).containsOnly(Disposition.DONE);
        assertThat(outcomes).extracting(outcome -> outcome.outcome().orElseThrow().getClass().getSimpleName())
                .containsExactlyInAnyOrder("Processed", "AlreadyProcessed");
        assertThat(fixture.onQueue()).as("messages left on the queue").isZero();
    }

    @Test
    @DisplayName("a retryable failure is left on the queue for the back-off, then runs again and is deleted")
    void retryableFailureComesBackAfterTheBackoff() {
        SqsFixture fixture = fixture(5);
        SqsMessageProcessor<String> processor = open(builder(fixture));
        fixture.send("order-2", "body");
        AtomicInteger runs = new AtomicInteger();
        dev.dedup.MessageHandler<Message, String> failingOnce = message -> {
            if (runs.incrementAndGet() == 1) {
                throw new IllegalStateException("inventory service unavailable");
            }
            return "ok";
        };

        List<MessageOutcome<String>> first = pollFor(processor, 1, Duration.ofSeconds(5), failingOnce);
        long failedAt = System.nanoTime();
        List<MessageOutcome<String>> immediately = processor.poll(Duration.ZERO, failingOnce);
        List<MessageOutcome<String>> again = pollFor(processor, 1, Duration.ofSeconds(5), failingOnce);

        assertThat(first).singleElement().satisfies(outcome -> {
            assertThat(outcome.disposition()).isEqualTo(Disposition.RETRY);
            assertThat(outcome.outcome().orElseThrow()).isInstanceOf(ProcessingOutcome.Failed.class);
        });
        assertThat(immediately).as("received during the back-off").isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - failedAt)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
        assertThat(again).singleElement().satisfies(outcome -> {
            assertThat(outcome.disposition()).isEqualTo(Disposition.DONE);
            assertThat(outcome.outcome().orElseThrow()).isInstanceOf(ProcessingOutcome.Processed.class);
            assertThat(outcome.message().attributesAsStrings()).containsEntry("ApproximateReceiveCount", "2");
        });
        assertThat(fixture.onQueue()).isZero();
    }

    @Test
    @DisplayName("a key held by another consumer stays invisible until that lease ends, then runs here")
    void heldKeyWaitsForTheOtherLease() {
        SqsFixture fixture = fixture(5);
        SqsMessageProcessor<String> processor = open(builder(fixture));
        Claim elsewhere = (Claim) store.claim("order-3", Duration.ofSeconds(2));
        fixture.send("order-3", "body");
        List<String> ran = new ArrayList<>();

        List<MessageOutcome<String>> first = pollFor(processor, 1, Duration.ofSeconds(5), message -> {
            ran.add(message.body());
            return "ok";
        });
        List<MessageOutcome<String>> beforeTheLeaseEnds = processor.poll(Duration.ofSeconds(1), message -> "ok");
        List<MessageOutcome<String>> after = pollFor(processor, 1, Duration.ofSeconds(5), message -> {
            ran.add(message.body());
            return "ok";
        });

        assertThat(first).singleElement().satisfies(outcome -> {
            assertThat(outcome.disposition()).isEqualTo(Disposition.RETRY);
            assertThat(outcome.outcome().orElseThrow()).isInstanceOf(ProcessingOutcome.InProgressElsewhere.class);
        });
        assertThat(beforeTheLeaseEnds).isEmpty();
        assertThat(after).singleElement().extracting(MessageOutcome::disposition).isEqualTo(Disposition.DONE);
        assertThat(ran).hasSize(1);
        assertThat(store.complete(elsewhere, Duration.ofMinutes(1), null)).as("the lapsed claim completes").isFalse();
    }

    @Test
    @DisplayName("a kept failure is not deleted: the redrive policy moves it to the dead-letter queue at maxReceiveCount")
    void keptFailureGoesToTheRedrivePolicy() {
        SqsFixture fixture = fixture(2);
        SqsMessageProcessor<String> processor = open(builder(fixture)
                .keepKeyOn(e -> e instanceof IllegalArgumentException)
                .retryBackoff(Duration.ZERO, Duration.ZERO));
        String id = fixture.send("order-4", "unknown sku");
        AtomicInteger runs = new AtomicInteger();

        List<MessageOutcome<String>> outcomes = pollFor(processor, 2, Duration.ofSeconds(5), message -> {
            runs.incrementAndGet();
            throw new IllegalArgumentException("unknown SKU");
        });
        List<MessageOutcome<String>> third = processor.poll(Duration.ofSeconds(1), message -> "never");

        assertThat(outcomes).extracting(MessageOutcome::disposition).containsOnly(Disposition.REDRIVE);
        assertThat(outcomes).extracting(outcome -> outcome.outcome().orElseThrow().getClass().getSimpleName())
                .containsExactly("Failed", "AlreadyFailed");
        assertThat(runs).hasValue(1);
        assertThat(third).as("moved by the redrive policy instead of a third receive").isEmpty();
        assertThat(fixture.deadLetters(Duration.ofSeconds(3))).singleElement()
                .satisfies(letter -> assertThat(letter.messageId()).isEqualTo(id));
        assertThat(fixture.onQueue()).isZero();
    }

    @Test
    @DisplayName("with deadLetterQueue and maxReceives, the last receive's failure is sent there with its reason, then deleted")
    void explicitDeadLetterQueueAfterMaxReceives() {
        SqsFixture fixture = fixture(10);
        SqsMessageProcessor<String> processor = open(builder(fixture)
                .deadLetterQueue(fixture.deadLetterQueue)
                .maxReceives(2)
                .retryBackoff(Duration.ZERO, Duration.ZERO));
        fixture.send("order-5", "payload");
        AtomicInteger runs = new AtomicInteger();

        List<MessageOutcome<String>> outcomes = pollFor(processor, 2, Duration.ofSeconds(5), message -> {
            runs.incrementAndGet();
            throw new IllegalStateException("still down");
        });

        assertThat(outcomes).extracting(MessageOutcome::disposition)
                .containsExactly(Disposition.RETRY, Disposition.DEAD_LETTERED);
        assertThat(runs).hasValue(2);
        assertThat(fixture.deadLetters(Duration.ofSeconds(3))).singleElement().satisfies(letter -> {
            assertThat(letter.body()).isEqualTo("payload");
            assertThat(letter.messageAttributes().get(SqsFixture.KEY_ATTRIBUTE).stringValue()).isEqualTo("order-5");
            assertThat(letter.messageAttributes().get(SqsMessageProcessor.REASON_ATTRIBUTE).stringValue())
                    .startsWith("failed: java.lang.IllegalStateException: still down");
        });
        assertThat(fixture.onQueue()).isZero();
        assertThat(store.inspect("order-5")).hasValueSatisfying(
                record -> assertThat(record.state()).hasToString("FAILED"));
    }

    @Test
    @DisplayName("a message without its key is dead-lettered unprocessed")
    void messageWithoutKeyIsDeadLettered() {
        SqsFixture fixture = fixture(10);
        SqsMessageProcessor<String> processor = open(builder(fixture).deadLetterQueue(fixture.deadLetterQueue));
        fixture.sqs.sendMessage(b -> b.queueUrl(fixture.queue).messageBody("no key"));
        AtomicInteger runs = new AtomicInteger();

        List<MessageOutcome<String>> outcomes = pollFor(processor, 1, Duration.ofSeconds(5), message -> {
            runs.incrementAndGet();
            return "ran";
        });

        assertThat(outcomes).singleElement().extracting(MessageOutcome::disposition)
                .isEqualTo(Disposition.DEAD_LETTERED);
        assertThat(runs).hasValue(0);
        assertThat(fixture.deadLetters(Duration.ofSeconds(3))).singleElement().satisfies(letter -> assertThat(
                letter.messageAttributes().get(SqsMessageProcessor.REASON_ATTRIBUTE).stringValue())
                .contains("no key").contains("MissingKeyException").contains("'event-id'"));
    }

    @Test
    @DisplayName("a queue with neither a redrive policy nor a dead-letter queue of the processor's is refused")
    void queueWithoutRedrivePolicyIsRefused() {
        try (SqsClient sqs = ElasticMq.client()) {
            String queue = ElasticMq.createQueue(sqs, "bare", Map.of());
            SqsMessageProcessor.Builder<Void> builder = SqsMessageProcessor.builder(sqs, queue, store,
                    ResultCodec.none());

            assertThatThrownBy(builder::build).isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining(queue).hasMessageContaining("RedrivePolicy");
            assertThatThrownBy(() -> builder.deadLetterQueue(queue).maxReceives(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0");
            sqs.deleteQueue(b -> b.queueUrl(queue));
        }
    }

    @Test
    @DisplayName("a slow handler's message is kept invisible while it runs: no other consumer receives it")
    void slowHandlerKeepsItsMessageInvisible() throws Exception {
        SqsFixture fixture = fixture(5);
        SqsMessageProcessor<String> processor = open(builder(fixture)
                .lease(Duration.ofSeconds(1))
                .visibilityTimeout(Duration.ofSeconds(1)));
        fixture.send("order-6", "slow");
        Map<String, Integer> seenByOthers = new ConcurrentHashMap<>();
        Thread other = new Thread(() -> {
            long end = System.nanoTime() + Duration.ofMillis(3500).toNanos();
            while (System.nanoTime() < end) {
                for (Message message : fixture.sqs.receiveMessage(b -> b.queueUrl(fixture.queue)
                        .waitTimeSeconds(1).visibilityTimeout(1)).messages()) {
                    seenByOthers.merge(message.messageId(), 1, Integer::sum);
                }
            }
        });

        List<MessageOutcome<String>> outcomes = pollFor(processor, 1, Duration.ofSeconds(10), message -> {
            other.start();
            Thread.sleep(3000);     // three visibility timeouts
            return "done";
        });
        other.join();

        assertThat(seenByOthers).as("receives by another consumer while the handler ran").isEmpty();
        assertThat(outcomes).singleElement().satisfies(outcome -> {
            assertThat(outcome.outcome().orElseThrow()).isInstanceOf(ProcessingOutcome.Processed.class);
            assertThat(outcome.disposition()).isEqualTo(Disposition.DONE);
        });
        assertThat(fixture.onQueue()).isZero();
    }
}
