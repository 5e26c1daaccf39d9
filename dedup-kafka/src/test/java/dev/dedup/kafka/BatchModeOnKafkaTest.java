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
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@link KafkaRecordProcessor.Builder#settleInBatches()} on the real broker and PostgreSQL: one claimAll and one
 * settleAll per partition batch, no store call per record, the effects once and the offsets committed; a republish
 * replays the stored result. The outcome rules are {@link BatchOffsetsOnKafkaTest}'s.
 */
class BatchModeOnKafkaTest {
    private static final int PARTITIONS = 2;

    private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
    private DedupStore postgres;
    private WatchedStore store;
    private KafkaProducer<String, String> producer;

    @BeforeEach
    void setUp() {
        postgres = KafkaTestSupport.postgresStore("kafka-batch-" + unique());
        store = new WatchedStore(postgres);
        producer = producer();
    }

    @AfterEach
    void tearDown() {
        producer.close();
        postgres.close();
    }

    @Test
    @DisplayName("one claimAll and one settleAll per partition batch, nothing per record; effects once, offsets"
            + " committed; republished messages replay their stored result and settle nothing")
    void oneSettlePerPartitionBatch() throws Exception {
        String topic = createTopic("batch", PARTITIONS);
        for (int i = 0; i < 30; i++) {
            send(producer, topic, i % PARTITIONS, "m" + i, "m" + i);
        }
        String group = "batch-" + unique();
        try (KafkaConsumer<String, String> consumer = consumer(group, 10)) {
            consumer.subscribe(List.of(topic));
            var processor = KafkaRecordProcessor.builder(consumer, (DedupStore) store, ResultCodec.utf8())
                    .settleInBatches()
                    .deadLetters(letter -> {
                        throw new AssertionError("no dead letters expected: " + letter);
                    })
                    .build();

            List<PollResult<String, String, String>> first = drain(processor, group, topic);

            assertThat(effects).hasSize(30).allSatisfy((id, count) -> assertThat(count).hasValue(1));
            long batches = partitionBatches(first);
            assertThat(store.calls("claimAll")).as("one claimAll per partition batch").isEqualTo((int) batches);
            assertThat(store.calls("settleAll")).as("one settleAll per partition batch").isEqualTo((int) batches);
            assertThat(store.calls("complete") + store.calls("fail") + store.calls("release") + store.calls("claim"))
                    .as("store calls per record").isZero();
            assertThat(committed(group, topic)).isEqualTo(Map.of(0, 15L, 1, 15L));

            for (int i = 0; i < 6; i++) {
                send(producer, topic, i % PARTITIONS, "m" + i, "m" + i + "-again");
            }
            List<PollResult<String, String, String>> second = drain(processor, group, topic);

            assertThat(effects).hasSize(30).allSatisfy((id, count) -> assertThat(count).hasValue(1));
            assertThat(second.stream().flatMap(result -> result.outcomes().stream()).map(RecordOutcome::outcome))
                    .hasSize(6).allSatisfy(outcome -> assertThat(outcome).isInstanceOfSatisfying(
                            ProcessingOutcome.AlreadyProcessed.class, done -> assertThat(done.result())
                                    .hasValue("done " + done.key())));
            assertThat(store.calls("settleAll")).as("a batch of duplicates settles nothing").isEqualTo((int) batches);
            assertThat(committed(group, topic)).isEqualTo(Map.of(0, 18L, 1, 18L));
        }
    }

    private List<PollResult<String, String, String>> drain(KafkaRecordProcessor<String, String, String> processor,
            String group, String topic) throws Exception {
        Map<Integer, Long> end = endOffsets(topic, PARTITIONS);
        List<PollResult<String, String, String>> results = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            results.add(processor.poll(Duration.ofMillis(200), record -> {
                effects.computeIfAbsent(record.value(), key -> new AtomicInteger()).incrementAndGet();
                return "done " + record.value();
            }));
            if (committed(group, topic).equals(end)) {
                return results;
            }
        }
        throw new AssertionError("not everything committed within 300 polls");
    }

    private static long partitionBatches(List<PollResult<String, String, String>> results) {
        return results.stream().mapToLong(result -> result.outcomes().stream()
                .map(outcome -> outcome.record().partition()).distinct().count()).sum();
    }
}
