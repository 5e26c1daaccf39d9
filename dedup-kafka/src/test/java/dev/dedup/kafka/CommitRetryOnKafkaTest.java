package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.consumer;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.MessageHandler;
import dev.dedup.ResultCodec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A commit the group refuses during a rebalance is tried again with the next poll, on the real broker. */
class CommitRetryOnKafkaTest {
    /** The classic protocol with cooperative rebalancing: a member keeps its partitions while the group rebalances. */
    private static final Map<String, Object> COOPERATIVE = Map.of(
            ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
            ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName(),
            ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 100);

    @Test
    @DisplayName("a commit refused during a cooperative rebalance (RebalanceInProgressException) is committed with"
            + " the next poll, for the partition the member kept: the lag reaches 0 with no new record")
    void commitRefusedDuringRebalanceIsRetried() throws Exception {
        String topic = createTopic("commit-retry", 1);
        String group = "commit-retry-" + unique();
        List<String> handled = new CopyOnWriteArrayList<>();
        AtomicBoolean joined = new AtomicBoolean(true);
        try (DedupStore store = KafkaTestSupport.postgresStore("kafka-commit-retry-" + unique());
                KafkaProducer<String, String> producer = producer();
                // One record per poll: the second stays in the fetch buffer, to be returned during the rebalance.
                KafkaConsumer<String, String> consumer = consumer(group, 1, COOPERATIVE)) {
            send(producer, topic, 0, "m0", "v0");
            send(producer, topic, 0, "m1", "v1");
            consumer.subscribe(List.of(topic));
            var processor = KafkaRecordProcessor.builder(consumer, store, ResultCodec.none())
                    .deadLetters(letter -> {
                        throw new AssertionError("no dead letter expected: " + letter);
                    })
                    .build();
            MessageHandler<ConsumerRecord<String, String>, Void> handler = record -> {
                handled.add(record.value());
                return null;
            };
            for (int i = 0; i < 100 && handled.isEmpty(); i++) {
                processor.poll(Duration.ofMillis(200), handler);
            }
            assertThat(committed(group, topic)).isEqualTo(Map.of(0, 1L));

            // A second member joins: the group rebalances, and the first learns it from its next heartbeat.
            Thread second = new Thread(() -> {
                try (KafkaConsumer<String, String> member = consumer(group, 1, COOPERATIVE)) {
                    member.subscribe(List.of(topic));
                    while (joined.get()) {
                        member.poll(Duration.ofMillis(100));
                    }
                }
            });
            second.start();
            try {
                awaitRebalance(group);
                Thread.sleep(1_000);    // ten heartbeats of the first member

                // Its next poll starts its rejoin and returns the buffered record; the commit comes mid-rebalance.
                var refused = processor.poll(Duration.ofMillis(200), handler);
                assertThat(handled).containsExactly("v0", "v1");
                assertThat(refused.commitFailure()).as("the commit was refused mid-rebalance")
                        .containsInstanceOf(RebalanceInProgressException.class);

                // No record arrives any more: the next polls complete the rebalance and commit what was settled.
                for (int i = 0; i < 50 && !committed(group, topic).equals(Map.of(0, 2L)); i++) {
                    processor.poll(Duration.ofMillis(100), handler);
                }
                assertThat(consumer.assignment()).as("the first member kept the partition").hasSize(1);
                assertThat(committed(group, topic)).isEqualTo(Map.of(0, 2L));
                assertThat(handled).containsExactly("v0", "v1");
            } finally {
                joined.set(false);
                second.join(10_000);
            }
        }
    }

    /** Waits until the coordinator has started a rebalance of {@code group}. */
    private static void awaitRebalance(String group) throws Exception {
        try (Admin admin = KafkaTestSupport.admin()) {
            for (int i = 0; i < 100; i++) {
                GroupState state = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                        .get(10, TimeUnit.SECONDS).groupState();
                if (state == GroupState.PREPARING_REBALANCE || state == GroupState.COMPLETING_REBALANCE) {
                    return;
                }
                Thread.sleep(50);
            }
        }
        throw new AssertionError("group " + group + " did not start a rebalance");
    }
}
