package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.consumer;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.endOffsets;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Duplicate publishes take effect once, with one claimAll per partition batch, on the real broker and PostgreSQL. */
class DuplicatesOnKafkaTest {
    private static final int PARTITIONS = 2;

    private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
    private DedupStore postgres;
    private WatchedStore store;
    private KafkaProducer<String, String> producer;

    @BeforeEach
    void setUp() {
        postgres = KafkaTestSupport.postgresStore("kafka-dups-" + unique());
        store = new WatchedStore(postgres);
        producer = producer();
    }

    @AfterEach
    void tearDown() {
        producer.close();
        postgres.close();
    }

    private String effect(String id) {
        effects.computeIfAbsent(id, key -> new AtomicInteger()).incrementAndGet();
        return "done";
    }

    /** Polls until the group has committed every record of the topic; returns every poll's result. */
    private List<PollResult<String, String, String>> drain(KafkaConsumer<String, String> consumer,
            KafkaRecordProcessor<String, String, String> processor, String group, String topic,
            MessageHandler<ConsumerRecord<String, String>, String> handler) throws Exception {
        Map<Integer, Long> end = endOffsets(topic, PARTITIONS);
        List<PollResult<String, String, String>> results = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            results.add(processor.poll(Duration.ofMillis(200), handler));
            if (committed(group, topic).equals(end)) {
                return results;
            }
        }
        throw new AssertionError("not everything committed within 300 polls");
    }

    @Test
    @DisplayName("10 of 40 messages published twice (same partition or the other): each takes effect once,"
            + " with one claimAll per partition batch")
    void duplicatePublishesTakeEffectOnce() throws Exception {
        String topic = createTopic("dups", PARTITIONS);
        Random random = new Random(42);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            String id = "m" + i;
            int partition = random.nextInt(PARTITIONS);
            send(producer, topic, partition, id, id);
            ids.add(id);
            if (i % 4 == 0) {
                // Next to the first copy (the same batch, most likely), or on the other partition.
                send(producer, topic, i % 8 == 0 ? partition : 1 - partition, id, id + "-again");
            }
        }
        String group = "dups-" + unique();
        try (KafkaConsumer<String, String> consumer = consumer(group, 15)) {
            consumer.subscribe(List.of(topic));
            var processor = KafkaRecordProcessor.builder(consumer, (DedupStore) store, ResultCodec.utf8())
                    .deadLetters(letter -> {
                        throw new AssertionError("no dead letters expected: " + letter);
                    })
                    .build();

            var results = drain(consumer, processor, group, topic, record -> effect(record.value().split("-")[0]));

            assertThat(effects.keySet()).containsExactlyInAnyOrderElementsOf(ids);
            assertThat(effects.values()).allSatisfy(count -> assertThat(count).hasValue(1));
            long batches = results.stream().mapToLong(result -> result.outcomes().stream()
                    .map(outcome -> outcome.record().partition()).distinct().count()).sum();
            long skipped = results.stream().mapToLong(r -> r.count(ProcessingOutcome.AlreadyProcessed.class)).sum();
            assertThat(skipped).isEqualTo(10);
            assertThat(store.calls("claimAll")).as("one claimAll per partition batch").isEqualTo((int) batches);
            // Only a key repeated inside one batch is claimed again on its own, when its turn comes.
            assertThat(store.calls("claim")).isEqualTo(repeatsInsideBatches(results));
            System.out.printf("duplicates: %d records in %d partition batches, %d claimAll, %d single claims%n",
                    results.stream().mapToInt(r -> r.outcomes().size()).sum(), batches, store.calls("claimAll"),
                    store.calls("claim"));
        }
    }

    private static int repeatsInsideBatches(List<PollResult<String, String, String>> results) {
        int repeats = 0;
        for (var result : results) {
            Map<Integer, Set<String>> seen = new ConcurrentHashMap<>();
            for (var outcome : result.outcomes()) {
                if (!seen.computeIfAbsent(outcome.record().partition(), p -> new HashSet<>())
                        .add(outcome.outcome().key())) {
                    repeats++;
                }
            }
        }
        return repeats;
    }

    @Test
    @DisplayName("a business key: two records of one order event, with different message ids, take effect once")
    void businessKey() throws Exception {
        String topic = createTopic("business", PARTITIONS);
        send(producer, topic, 0, "id-1", "order-7:paid");
        send(producer, topic, 1, "id-2", "order-7:paid");
        send(producer, topic, 1, "id-3", "order-8:paid");
        String group = "business-" + unique();
        try (KafkaConsumer<String, String> consumer = consumer(group, 100)) {
            consumer.subscribe(List.of(topic));
            var processor = KafkaRecordProcessor.builder(consumer, (DedupStore) store, ResultCodec.utf8())
                    .keys(RecordKeys.of(ConsumerRecord::value))
                    .deadLetters(letter -> {
                        throw new AssertionError("no dead letters expected: " + letter);
                    })
                    .build();

            drain(consumer, processor, group, topic, record -> effect(record.value()));

            assertThat(effects).containsOnlyKeys("order-7:paid", "order-8:paid");
            assertThat(effects.get("order-7:paid")).hasValue(1);
        }
    }
}
