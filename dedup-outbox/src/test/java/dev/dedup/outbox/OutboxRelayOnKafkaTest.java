package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.header;
import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The relay publishing to the real Kafka broker, from PostgreSQL and, where the test takes a database, MariaDB. */
class OutboxRelayOnKafkaTest {
    private static final OutboxFixture fixture = new OutboxFixture(8);
    private KafkaOutboxPublisher publisher;

    @BeforeEach
    void createPublisher() {
        publisher = KafkaOutboxPublisher.create(OutboxTestSupport.producerConfig(), Duration.ofSeconds(30));
    }

    @AfterEach
    void dropOutboxes() {
        publisher.close();
        fixture.dropOutboxes();
    }

    @AfterAll
    static void disconnect() {
        fixture.close();
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("committed events reach Kafka once each with their message-id, key and headers; rolled back: none")
    void committedOnceRolledBackNever(TestDatabase database) throws Exception {
        Outbox outbox = fixture.outbox(database);
        DataSource pool = fixture.pool(database);
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

    static Stream<Arguments> threeRunsOnEach() {
        return Stream.of(TestDatabase.values()).flatMap(database -> IntStream.rangeClosed(1, 3)
                .mapToObj(run -> Arguments.of(database, run)));
    }

    @ParameterizedTest(name = "{0}, run {1}")
    @MethodSource("threeRunsOnEach")
    @DisplayName("three relays on one table: every event published once, and each key's events in append order")
    void relaysKeepKeyOrderAndNeverPublishTwice(TestDatabase database, int run) throws Exception {
        Outbox outbox = fixture.outbox(database);
        DataSource pool = fixture.pool(database);
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
        Outbox outbox = fixture.outbox(TestDatabase.POSTGRESQL);
        String topic = unique("outbox-missing").replace('_', '-');
        String id = appendTo(outbox, topic, "k", "e");
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
                assertThat(fixture.attempts(outbox, id).attempts())
                        .as("alone in its batch, a missing topic looks like an outage: no attempt").isZero();
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
    @DisplayName("an event for a missing topic is parked after maxAttempts; the other keys' events and its own key's"
            + " later one go out meanwhile, and a replay once the topic exists publishes it")
    void anEventForAMissingTopicIsParkedThenReplayed() throws Exception {
        Outbox outbox = fixture.outbox(TestDatabase.POSTGRESQL);
        String topic = OutboxTestSupport.createTopic("outbox-beside", 1);
        String missing = unique("outbox-missing").replace('_', '-');
        String poison = appendTo(outbox, missing, "a", "poison");
        List<String> others = List.of(appendTo(outbox, topic, "a", "after"), appendTo(outbox, topic, "b", "beside"),
                appendTo(outbox, topic, null, "unkeyed"));
        // The broker does not create topics (unacknowledgedBatchIsRetried checks it): the send waits max.block.ms.
        Map<String, Object> config = new HashMap<>(OutboxTestSupport.producerConfig());
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 1_000);
        try (KafkaOutboxPublisher kafka = KafkaOutboxPublisher.create(config, Duration.ofSeconds(10));
                OutboxRelay relay = OutboxRelay.builder(outbox, kafka).maxAttempts(3)
                        .pollInterval(Duration.ofMillis(20)).maxBackoff(Duration.ofMillis(200)).build()) {
            relay.start();
            long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((outbox.pendingCount() > 0 || outbox.parkedCount() == 0) && System.nanoTime() < limit) {
                Thread.sleep(50);
            }
            assertThat(outbox.parkedCount()).as("parked").isEqualTo(1);
            assertThat(outbox.pendingCount()).as("the other events published").isZero();
            assertThat(relay.parkedEvents()).isEqualTo(1);
        }
        OutboxFixture.Attempts attempts = fixture.attempts(outbox, poison);
        assertThat(attempts.attempts()).isEqualTo(3);
        assertThat(attempts.parked()).isTrue();
        assertThat(attempts.lastError()).contains(missing).contains("not present in metadata");
        assertThat(OutboxTestSupport.readAll(topic, others.size(), Duration.ofSeconds(1)))
                .extracting(r -> header(r, "message-id")).containsAll(others).doesNotContain(poison);

        try (var admin = OutboxTestSupport.admin()) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(missing, 1, (short) 1))).all()
                    .get(30, TimeUnit.SECONDS);
        }
        assertThat(outbox.replayParked()).isEqualTo(1);
        assertThat(outbox.parkedCount()).isZero();
        assertThat(fixture.attempts(outbox, poison).attempts()).as("reset").isZero();
        assertThat(OutboxRelay.builder(outbox, publisher).build().relayOnce()).isEqualTo(1);
        assertThat(OutboxTestSupport.readAll(missing, 1, Duration.ofSeconds(1)))
                .extracting(r -> header(r, "message-id")).containsExactly(poison);
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("a record larger than max.request.size is rejected at once, parked at the limit, and its key goes on")
    void aRecordTooLargeIsParked(TestDatabase database) throws Exception {
        Outbox outbox = fixture.outbox(database);
        DataSource pool = fixture.pool(database);
        String topic = OutboxTestSupport.createTopic("outbox-large", 1);
        String large;
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            large = outbox.append(tx, topic, "k", new byte[2 * 1024 * 1024], Map.of());     // default limit: 1 MiB
            tx.commit();
        }
        String after = appendTo(outbox, topic, "k", "after");
        OutboxRelay relay = OutboxRelay.builder(outbox, publisher).maxAttempts(2).build();
        for (int attempt = 1; attempt <= 2; attempt++) {
            assertThatThrownBy(relay::relayOnce).isInstanceOf(OutboxPublishException.class)
                    .satisfies(e -> assertThat(((OutboxPublishException) e).rejected()).containsOnlyKeys(large));
            assertThat(fixture.attempts(outbox, large).attempts()).isEqualTo(attempt);
        }
        assertThat(fixture.attempts(outbox, large).parked()).isTrue();
        assertThat(relay.relayOnce()).as("the key's next event, no longer held").isEqualTo(1);
        assertThat(relay.parkedEvents()).isEqualTo(1);
        assertThat(fixture.attempts(outbox, large).lastError()).contains("RecordTooLargeException");
        assertThat(OutboxTestSupport.readAll(topic, 1, Duration.ofSeconds(1)))
                .extracting(r -> header(r, "message-id")).as("sent with each attempt of the one before it, never"
                        + " the large one").containsOnly(after);
    }

    private static String appendTo(Outbox target, String topic, String key, String body) throws Exception {
        try (Connection tx = target.dataSource().getConnection()) {
            tx.setAutoCommit(false);
            String id = target.append(tx, topic, key, utf8(body), Map.of());
            tx.commit();
            return id;
        }
    }

    @Test
    @DisplayName("LISTEN/NOTIFY: a commit wakes an idle relay at once, not after its 30 s poll interval")
    void notifyWakesAnIdleRelay() throws Exception {
        Outbox notifying = fixture.outbox(TestDatabase.POSTGRESQL, builder -> builder.notifyRelays(true));
        DataSource pool = fixture.pool(TestDatabase.POSTGRESQL);
        String table = notifying.table();
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
        }
    }

    private static void appendOne(Outbox target, String topic) throws Exception {
        try (Connection tx = target.dataSource().getConnection()) {
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
