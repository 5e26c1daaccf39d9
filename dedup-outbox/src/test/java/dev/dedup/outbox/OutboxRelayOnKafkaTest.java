package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.header;
import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** The relay publishing to the real Kafka broker. */
class OutboxRelayOnKafkaTest {
    private static HikariDataSource pool;
    private Outbox outbox;
    private KafkaOutboxPublisher publisher;

    @BeforeAll
    static void connect() {
        pool = OutboxTestSupport.pool(8);
    }

    @AfterAll
    static void disconnect() {
        pool.close();
    }

    @BeforeEach
    void createOutbox() {
        outbox = Outbox.builder(pool).table(unique("outbox")).build();
        outbox.createSchema();
        publisher = KafkaOutboxPublisher.create(OutboxTestSupport.producerConfig(), Duration.ofSeconds(30));
    }

    @AfterEach
    void dropOutbox() {
        publisher.close();
        outbox.dropSchema(null);
    }

    @Test
    @DisplayName("committed events reach Kafka once each with their message-id, key and headers; rolled back: none")
    void committedOnceRolledBackNever() throws Exception {
        String topic = OutboxTestSupport.createTopic("outbox", 3);
        List<String> committed = new ArrayList<>();
        List<String> rolledBack = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            try (Connection tx = pool.getConnection()) {
                tx.setAutoCommit(false);
                String id = outbox.append(tx, topic, "order-" + i, utf8("event " + i), Map.of("type", "Created"));
                if (i % 4 == 3) {
                    tx.rollback();
                    rolledBack.add(id);
                } else {
                    tx.commit();
                    committed.add(id);
                }
            }
        }
        OutboxRelay relay = OutboxRelay.builder(outbox, publisher).batchSize(7).build();
        int relayed = 0;
        for (int n; (n = relay.relayOnce()) > 0; ) {
            relayed += n;
        }
        assertThat(relayed).isEqualTo(committed.size());
        assertThat(outbox.pendingCount()).isZero();
        assertThat(relay.relayOnce()).as("nothing left").isZero();

        List<ConsumerRecord<String, byte[]>> records = OutboxTestSupport.readAll(topic, committed.size(),
                Duration.ofSeconds(2));
        Map<String, ConsumerRecord<String, byte[]>> byId = records.stream()
                .collect(Collectors.toMap(r -> header(r, "message-id"), Function.identity()));
        assertThat(records).hasSize(committed.size());
        assertThat(byId.keySet()).containsExactlyInAnyOrderElementsOf(committed).doesNotContainAnyElementsOf(rolledBack);
        ConsumerRecord<String, byte[]> first = byId.get(committed.get(0));
        assertThat(first.key()).isEqualTo("order-0");
        assertThat(new String(first.value(), StandardCharsets.UTF_8)).isEqualTo("event 0");
        assertThat(header(first, "type")).isEqualTo("Created");
    }

    @RepeatedTest(3)
    @DisplayName("three relays on one table: every event published once, and each key's events in append order")
    void relaysKeepKeyOrderAndNeverPublishTwice() throws Exception {
        String topic = OutboxTestSupport.createTopic("outbox-order", 3);
        int events = 900;
        int keys = 6;
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            for (int i = 0; i < events; i++) {
                outbox.append(tx, topic, "key-" + (i % keys), utf8(Integer.toString(i)), Map.of());
            }
            tx.commit();
        }
        // Small batches and relays polling as fast as they can, so they contend for the same keys throughout.
        List<OutboxRelay> relays = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            relays.add(OutboxRelay.builder(outbox, publisher).batchSize(5).pollInterval(Duration.ofMillis(1)).build());
        }
        try {
            relays.forEach(OutboxRelay::start);
            long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (outbox.pendingCount() > 0 && System.nanoTime() < limit) {
                Thread.sleep(50);
            }
            assertThat(outbox.pendingCount()).isZero();
            assertThat(relays.stream().mapToLong(OutboxRelay::publishedCount).sum()).isEqualTo(events);
            assertThat(relays).as("every relay worked").allSatisfy(relay ->
                    assertThat(relay.publishedCount()).isPositive());
        } finally {
            relays.forEach(OutboxRelay::close);
        }
        List<ConsumerRecord<String, byte[]>> records = OutboxTestSupport.readAll(topic, events, Duration.ofSeconds(2));
        assertThat(records).hasSize(events);
        assertThat(records.stream().map(r -> header(r, "message-id")).collect(Collectors.toSet())).hasSize(events);
        Map<String, List<Integer>> byKey = new HashMap<>();
        for (ConsumerRecord<String, byte[]> record : records) {
            byKey.computeIfAbsent(record.key(), k -> new ArrayList<>())
                    .add(Integer.parseInt(new String(record.value(), StandardCharsets.UTF_8)));
        }
        assertThat(byKey).hasSize(keys);
        byKey.forEach((key, sequence) -> assertThat(sequence).as(key).isSorted().hasSize(events / keys));
    }

    @Test
    @DisplayName("a batch Kafka does not acknowledge is not marked, and goes out on a later cycle")
    void unacknowledgedBatchIsRetried() throws Exception {
        String topic = unique("outbox-missing").replace('_', '-');
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            outbox.append(tx, topic, "k", utf8("e"), Map.of());
            tx.commit();
        }
        // The topic does not exist yet and the broker does not create topics on request: the send times out.
        Map<String, Object> config = new HashMap<>(OutboxTestSupport.producerConfig());
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 1_000);
        boolean autoCreated;
        try (KafkaOutboxPublisher failing = KafkaOutboxPublisher.create(config, Duration.ofSeconds(2))) {
            OutboxRelay relay = OutboxRelay.builder(outbox, failing).build();
            autoCreated = tryRelay(relay);
            if (!autoCreated) {
                assertThat(relay.publishErrors()).isEqualTo(1);
                assertThat(outbox.pendingCount()).as("nothing marked").isEqualTo(1);
            }
        }
        assertThat(autoCreated).as("the harness broker must refuse to auto-create topics for this test").isFalse();
        try (var admin = OutboxTestSupport.admin()) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 1, (short) 1))).all()
                    .get(30, TimeUnit.SECONDS);
        }
        OutboxRelay relay = OutboxRelay.builder(outbox, publisher).build();
        assertThat(relay.relayOnce()).isEqualTo(1);
        assertThat(outbox.pendingCount()).isZero();
        assertThat(OutboxTestSupport.readAll(topic, 1, Duration.ofSeconds(1))).hasSize(1);
    }

    @Test
    @DisplayName("LISTEN/NOTIFY: a commit wakes an idle relay at once, not after its 30 s poll interval")
    void notifyWakesAnIdleRelay() throws Exception {
        String table = unique("outbox");
        Outbox notifying = Outbox.builder(pool).table(table).notifyRelays(true).build();
        notifying.createSchema();
        String topic = OutboxTestSupport.createTopic("outbox-notify", 1);
        try (OutboxRelay relay = OutboxRelay.builder(notifying, publisher).pollInterval(Duration.ofSeconds(30))
                .build()) {
            relay.start();
            Thread.sleep(1_000);        // its first poll found nothing: it waits
            long started = System.nanoTime();
            appendOne(notifying, topic);
            while (notifying.pendingCount() > 0 && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(10)) {
                Thread.sleep(5);
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            System.out.printf("LISTEN/NOTIFY: commit to published in %d ms (poll interval 30 s)%n", millis);
            assertThat(notifying.pendingCount()).isZero();
            assertThat(millis).isLessThan(2_000);

            // The control: the same relay, the trigger removed (notifyRelays off): the event waits for the poll.
            Outbox.builder(pool).table(table).notifyRelays(false).build().createSchema();
            Thread.sleep(200);
            appendOne(notifying, topic);
            Thread.sleep(2_000);
            assertThat(notifying.pendingCount()).as("without the notification").isEqualTo(1);
        } finally {
            notifying.dropSchema(null);
        }
    }

    private void appendOne(Outbox target, String topic) throws Exception {
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            target.append(tx, topic, "k", utf8("e"), Map.of());
            tx.commit();
        }
    }

    private static boolean tryRelay(OutboxRelay relay) {
        try {
            return relay.relayOnce() == 1;
        } catch (OutboxPublishException expected) {
            assertThat(expected.confirmed()).isEmpty();
            assertThat(expected).hasMessageContaining("did not acknowledge 1 of 1");
            return false;
        }
    }
}
