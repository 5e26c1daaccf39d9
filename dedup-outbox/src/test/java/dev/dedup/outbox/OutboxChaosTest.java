package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.header;
import static dev.dedup.outbox.OutboxTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.outbox.RelayProcessMain.Slot;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The issue's end-to-end proof, on the real PostgreSQL and Kafka or RabbitMQ with real processes: a service commits
 * 2,000 orders, each with an outbox event in the same transaction, and rolls back 10% more; two relay processes
 * ({@link RelayProcessMain}) publish the outbox to the broker while the driver SIGKILLs one every 1-2 s and starts a new
 * one, and the relays also halt themselves now and then between Kafka's acknowledgement and the mark (the window
 * where the outbox publishes twice by design). A consumer with the PostgreSQL inbox applies each event. Asserted:
 * every committed order applied exactly once, no rolled-back order applied, the relays' duplicates counted and all
 * absorbed by the inbox, and each key's orders applied in commit order.
 */
class OutboxChaosTest {
    /** The broker the relays publish to. */
    enum Broker { KAFKA, RABBITMQ }

    private static final int ORDERS = 2_000;
    private static final int KEYS = 20;
    private static final int RELAYS = 2;
    /** Chance that a relay halts itself after Kafka acknowledged a batch, before marking it. */
    private static final double HALT = 0.03;
    private static final long RUN_LIMIT_MILLIS = 75_000;

    @ParameterizedTest(name = "{0}")
    @EnumSource(Broker.class)
    @DisplayName("relays SIGKILLed at random: every committed order applied once, rolled back none, duplicates absorbed")
    void exactlyOnceEndToEndUnderRelayKills(Broker broker) throws Exception {
        Random random = new Random(17);
        String prefix = unique("chaos");
        String destination = broker == Broker.KAFKA ? OutboxTestSupport.createTopic("outbox-chaos", 3)
                : prefix + "_exchange";
        Path dir = Files.createTempDirectory("outbox-chaos-");
        Path log = dir.resolve("relays.log");
        try (HikariDataSource pool = OutboxTestSupport.pool(6)) {
            Outbox outbox = Outbox.builder(pool).table(prefix + "_outbox").build();
            outbox.createSchema();
            PostgresDedupStore inbox = PostgresDedupStore.builder(pool).table(prefix + "_inbox")
                    .namespace("orders").createSchema(true).build();
            execute(pool, "CREATE TABLE " + prefix + "_orders (order_no int PRIMARY KEY)",
                    "CREATE TABLE " + prefix + "_applied (order_no int PRIMARY KEY, applied int NOT NULL)");
            List<String> arguments = List.of("jdbcUrl=" + OutboxTestSupport.postgresUrl(),
                    "table=" + outbox.table(), "broker=" + broker.name().toLowerCase(java.util.Locale.ROOT),
                    broker == Broker.KAFKA ? "bootstrap=" + OutboxTestSupport.kafkaBootstrap()
                            : "rabbitUrl=" + OutboxTestSupport.rabbitUrl(), "halt=" + HALT);
            Service service = new Service(pool, outbox, destination, prefix);
            InboxConsumer consumer = new InboxConsumer(pool, inbox, prefix);
            List<ConsumerProcess> all = new ArrayList<>();
            AutoCloseable feed = broker == Broker.KAFKA ? kafkaFeed(destination, consumer)
                    : rabbitFeed(destination, consumer);
            try {
                Thread writer = new Thread(service, "service");
                writer.start();
                List<ConsumerProcess> live = new ArrayList<>();
                for (int i = 0; i < RELAYS; i++) {
                    live.add(start(all, dir, log, arguments, random));
                }
                Map<Long, Integer> killsByPhase = new HashMap<>();
                int kills = 0;
                long started = System.nanoTime();
                long nextKill = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
                boolean drained = false;
                while (!drained && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(RUN_LIMIT_MILLIS)) {
                    Thread.sleep(100);
                    if (System.currentTimeMillis() >= nextKill && writer.isAlive()) {
                        ConsumerProcess victim = live.remove(random.nextInt(live.size()));
                        killsByPhase.merge(victim.kill(), 1, Integer::sum);
                        kills++;
                        live.add(start(all, dir, log, arguments, random));
                        nextKill = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
                    }
                    for (int i = 0; i < live.size(); i++) {
                        if (!live.get(i).isAlive()) {      // halted itself: restarted, like a supervised process
                            live.set(i, start(all, dir, log, arguments, random));
                        }
                    }
                    drained = !writer.isAlive() && outbox.pendingCount() == 0
                            && consumer.applied.size() == service.committed.size();
                }
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                for (ConsumerProcess relay : live) {
                    relay.kill();
                }
                Thread.sleep(1_000);        // anything a dying relay had in flight arrives and is absorbed
                feed.close();
                writer.join(10_000);

                long halts = sum(all, Slot.HALTS);
                long duplicates = consumer.records.get() - consumer.distinct.size();
                System.out.printf("outbox chaos on %s: %d orders committed, %d rolled back; %d relay processes, %d SIGKILLs"
                                + " (by phase idle/publishing/confirmed-not-marked %s), %d self-halts after the"
                                + " broker's acknowledgement; %d records consumed, %d duplicates published, %d"
                                + " absorbed by the inbox; relay errors %d; %.1f s%n",
                        broker, service.committed.size(), service.rolledBack.size(), all.size(), kills, killsByPhase, halts,
                        consumer.records.get(), duplicates, consumer.duplicates.get(), sum(all, Slot.ERRORS),
                        millis / 1000.0);

                assertThat(consumer.failure.get()).as("consumer failure").isNull();
                assertThat(service.failure.get()).as("service failure").isNull();
                assertThat(drained).as("every committed event applied within the limit; see " + log).isTrue();
                assertThat(service.committed).hasSize(ORDERS);
                assertThat(kills).isPositive();
                assertThat(applied(pool, prefix)).as("order_no -> times applied").hasSize(ORDERS)
                        .allSatisfy((order, times) -> assertThat(times).as("order " + order).isEqualTo(1))
                        .containsOnlyKeys(service.committed);
                assertThat(consumer.distinct).as("no event of a rolled-back order ever published")
                        .doesNotContainAnyElementsOf(service.rolledBackIds);
                assertThat(consumer.duplicates.get()).as("every duplicate absorbed by the inbox").isEqualTo(duplicates);
                if (halts > 0) {
                    assertThat(duplicates).as("each halt after the acknowledgement republishes its batch")
                            .isGreaterThanOrEqualTo(halts);
                }
                consumer.firstApplied.forEach((key, orders) -> assertThat(orders).as("key " + key).isSorted());
            } finally {
                feed.close();
                for (ConsumerProcess relay : all) {
                    if (relay.isAlive()) {
                        relay.kill();
                    }
                }
                outbox.dropSchema(null);
                inbox.dropSchema();
                execute(pool, "DROP TABLE IF EXISTS " + prefix + "_orders, " + prefix + "_applied");
            }
        }
    }

    /** The producing service: each order and its event in one transaction; one in ten more rolled back. */
    private static final class Service implements Runnable {
        final List<Integer> committed = java.util.Collections.synchronizedList(new ArrayList<>());
        final Set<Integer> rolledBack = new HashSet<>();
        final Set<String> rolledBackIds = new HashSet<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final HikariDataSource pool;
        private final Outbox outbox;
        private final String destination;
        private final String orders;

        Service(HikariDataSource pool, Outbox outbox, String destination, String prefix) {
            this.pool = pool;
            this.outbox = outbox;
            this.destination = destination;
            this.orders = prefix + "_orders";
        }

        @Override
        public void run() {
            try {
                int orderNo = 0;
                while (committed.size() < ORDERS) {
                    orderNo++;
                    boolean rollBack = orderNo % 10 == 0;
                    try (Connection tx = pool.getConnection();
                            PreparedStatement insert = tx.prepareStatement("INSERT INTO " + orders + " VALUES (?)")) {
                        tx.setAutoCommit(false);
                        insert.setInt(1, orderNo);
                        insert.executeUpdate();
                        String id = outbox.append(tx, destination, "sku-" + orderNo % KEYS,
                                Integer.toString(orderNo).getBytes(StandardCharsets.UTF_8), Map.of());
                        if (rollBack) {
                            tx.rollback();
                            rolledBack.add(orderNo);
                            rolledBackIds.add(id);
                        } else {
                            tx.commit();
                            committed.add(orderNo);
                        }
                    }
                    Thread.sleep(4);        // about 10 s of orders, so the kills land while they are written
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }
    }

    /** A consumer with the PostgreSQL inbox: claim, effect and completion in one transaction per message. */
    private static final class InboxConsumer {
        final Set<Integer> applied = ConcurrentHashMap.newKeySet();
        final Set<String> distinct = ConcurrentHashMap.newKeySet();
        final Map<String, List<Integer>> firstApplied = new ConcurrentHashMap<>();
        final AtomicLong records = new AtomicLong();
        final AtomicLong duplicates = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final HikariDataSource pool;
        private final PostgresDedupStore inbox;
        private final String appliedTable;

        InboxConsumer(HikariDataSource pool, PostgresDedupStore inbox, String prefix) {
            this.pool = pool;
            this.inbox = inbox;
            this.appliedTable = prefix + "_applied";
        }

        /** Called for each message, one at a time, in the broker's order. */
        void apply(String messageId, String key, byte[] body) throws SQLException {
            int orderNo = Integer.parseInt(new String(body, StandardCharsets.UTF_8));
            records.incrementAndGet();
            distinct.add(messageId);
            try (Connection tx = pool.getConnection()) {
                tx.setAutoCommit(false);
                DedupStore store = inbox.inTransaction(tx);
                if (store.claim(messageId, Duration.ofSeconds(30)) instanceof Claim claim) {
                    try (PreparedStatement effect = tx.prepareStatement("INSERT INTO " + appliedTable
                            + " VALUES (?, 1) ON CONFLICT (order_no) DO UPDATE SET applied = "
                            + appliedTable + ".applied + 1")) {
                        effect.setInt(1, orderNo);
                        effect.executeUpdate();
                    }
                    if (!store.complete(claim, Duration.ofDays(1), null)) {
                        throw new IllegalStateException("complete refused for " + messageId);
                    }
                    tx.commit();
                    applied.add(orderNo);
                    firstApplied.computeIfAbsent(key, k -> new ArrayList<>()).add(orderNo);
                } else {
                    tx.rollback();
                    duplicates.incrementAndGet();
                }
            }
        }
    }

    /** Consumes {@code topic} on a thread of its own, committing offsets after each poll, until closed. */
    private static AutoCloseable kafkaFeed(String topic, InboxConsumer inbox) {
        AtomicBoolean running = new AtomicBoolean(true);
        Thread thread = new Thread(() -> {
            try (KafkaConsumer<String, byte[]> consumer = OutboxTestSupport.consumer(unique("inbox"))) {
                consumer.subscribe(List.of(topic));
                while (running.get()) {
                    for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                        inbox.apply(header(record, "message-id"), record.key(), record.value());
                    }
                    consumer.commitSync();
                }
            } catch (Throwable e) {
                inbox.failure.set(e);
            }
        }, "kafka-inbox-consumer");
        thread.start();
        return () -> {
            running.set(false);
            thread.join(30_000);
        };
    }

    /**
     * Declares a topic exchange that routes every key to one queue and consumes it with manual acks, until closed;
     * the client calls back one delivery at a time, so each key's order is the queue's.
     */
    private static AutoCloseable rabbitFeed(String exchange, InboxConsumer inbox) throws Exception {
        com.rabbitmq.client.Connection connection = OutboxTestSupport.rabbitFactory().newConnection("outbox-chaos");
        Channel channel = connection.createChannel();
        String queue = exchange + "_queue";
        channel.exchangeDeclare(exchange, "topic", false, false, null);
        channel.queueDeclare(queue, false, false, false, null);
        channel.queueBind(queue, exchange, "#");
        channel.basicQos(100);
        channel.basicConsume(queue, false, (tag, delivery) -> {
            try {
                inbox.apply(delivery.getProperties().getMessageId(), delivery.getEnvelope().getRoutingKey(),
                        delivery.getBody());
                channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
            } catch (Throwable e) {
                inbox.failure.compareAndSet(null, e);
            }
        }, tag -> {});
        return () -> {
            if (!connection.isOpen()) {
                return;             // closed already: the run closes the feed before its finally block does
            }
            Channel cleanup = connection.createChannel();
            channel.close();
            cleanup.queueDelete(queue);
            cleanup.exchangeDelete(exchange);
            connection.close();
        };
    }

    private static ConsumerProcess start(List<ConsumerProcess> all, Path dir, Path log, List<String> arguments,
            Random random) {
        int serial = all.size() + 1;
        List<String> withSeed = new ArrayList<>(arguments);
        withSeed.add("seed=" + random.nextLong());
        ConsumerProcess relay = ConsumerProcess.start("relay-" + serial, RelayProcessMain.class,
                dir.resolve("relay-" + serial + ".board"), Slot.COUNT.ordinal(), log, withSeed);
        all.add(relay);
        return relay;
    }

    private static long sum(List<ConsumerProcess> relays, Slot slot) {
        return relays.stream().mapToLong(relay -> relay.board().get(slot.ordinal())).sum();
    }

    private static Map<Integer, Integer> applied(HikariDataSource pool, String prefix) throws SQLException {
        Map<Integer, Integer> applied = new HashMap<>();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT order_no, applied FROM " + prefix + "_applied")) {
            while (rows.next()) {
                applied.put(rows.getInt(1), rows.getInt(2));
            }
        }
        return applied;
    }

    private static void execute(HikariDataSource pool, String... sql) throws SQLException {
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }
}
