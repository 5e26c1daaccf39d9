package dev.dedup.examples.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.outbox.Outbox;
import dev.dedup.outbox.OutboxRelay;
import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The outbox and the inbox end to end, on the real PostgreSQL and Kafka: an order service reserves stock and appends
 * a {@code StockReserved} event in the same transaction (one order in ten fails after its append and rolls back); a
 * relay, woken by LISTEN/NOTIFY, publishes the committed events to Kafka; a shipping consumer applies each event
 * with the PostgreSQL inbox (claim, effect and completion in one transaction). Midway, a relay crash between the
 * broker's confirmation and the mark is simulated by un-marking published events: the relay publishes them again
 * under the same {@code message-id}, and the inbox absorbs the copies.
 *
 * <p>Everything is the run's own (tables, outbox, topic, inbox namespace) and dropped at the end, the inbox's rows
 * excepted (they expire with their retention).
 */
public final class OutboxDemo {
    private static final List<String> SKUS = List.of("apple", "banana", "cherry", "date");
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofDays(1);

    private OutboxDemo() {}

    /** What happened, and whether shipping applied exactly what the service committed. */
    public record Result(int orders, int appended, int rolledBack, long published, int republished, int received,
            int applied, int duplicatesAbsorbed, Map<String, Long> reserved, Map<String, Long> shipped) {
        public boolean exact() {
            return reserved.equals(shipped) && applied == appended;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: OutboxDemo <jdbc:postgresql://host:port/db?user=...>"
                    + " (Kafka from DEDUP_TEST_KAFKA_BOOTSTRAP, default 127.0.0.1:19092)");
            System.exit(2);
        }
        String kafka = System.getenv().getOrDefault("DEDUP_TEST_KAFKA_BOOTSTRAP", "127.0.0.1:19092");
        Result result = run(args[0], kafka, 500, 42);
        System.out.printf("transactional outbox demo on PostgreSQL and Kafka (%s)%n"
                        + "  orders                    %,d%n"
                        + "  events appended           %,d (committed with their stock update)%n"
                        + "  rolled back               %,d (the order failed after its append: no event)%n"
                        + "  published by the relay    %,d (%,d republished after a simulated crash before the"
                        + " mark)%n"
                        + "  received by shipping      %,d%n"
                        + "  applied by the inbox      %,d%n"
                        + "  duplicates absorbed       %,d%n"
                        + "  reserved (stock table)    %s%n"
                        + "  shipped (shipping table)  %s%n"
                        + "  %s%n",
                kafka, result.orders(), result.appended(), result.rolledBack(), result.published(),
                result.republished(), result.received(), result.applied(), result.duplicatesAbsorbed(),
                result.reserved(), result.shipped(),
                result.exact() ? "OK: every committed order shipped exactly once" : "WRONG");
        if (!result.exact()) {
            System.exit(1);
        }
    }

    /** Runs {@code orders} orders through the service, the relay and the consumer; waits up to a minute. */
    public static Result run(String jdbcUrl, String kafkaBootstrap, int orders, long seed) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(6);
        String run = UUID.randomUUID().toString().substring(0, 8);
        String stock = "outbox_demo_stock_" + run;
        String shipments = "outbox_demo_shipments_" + run;
        String topic = "outbox-demo-" + run;
        try (HikariDataSource db = new HikariDataSource(config)) {
            execute(db, "CREATE TABLE " + stock + " (sku text PRIMARY KEY, reserved bigint NOT NULL)");
            execute(db, "CREATE TABLE " + shipments + " (message_id text PRIMARY KEY, sku text NOT NULL,"
                    + " quantity integer NOT NULL)");
            for (String sku : SKUS) {
                execute(db, "INSERT INTO " + stock + " VALUES ('" + sku + "', 0)");
            }
            Outbox outbox = Outbox.builder(db).table("outbox_demo_" + run).notifyRelays(true).build();
            outbox.createSchema();
            PostgresDedupStore inbox = PostgresDedupStore.builder(db).namespace("outbox-demo-" + run)
                    .validateSchema(false).build();
            inbox.createSchema();
            createTopic(kafkaBootstrap, topic);
            try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.create(
                    Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafkaBootstrap), Duration.ofSeconds(30));
                    OutboxRelay relay = OutboxRelay.builder(outbox, publisher).batchSize(100)
                            .pollInterval(Duration.ofSeconds(1)).build();
                    KafkaConsumer<String, byte[]> consumer = consumer(kafkaBootstrap, topic)) {
                relay.start();
                Shipping shipping = new Shipping(db, inbox, shipments);
                Random random = new Random(seed);
                int appended = 0;
                int rolledBack = 0;
                for (int i = 0; i < orders; i++) {
                    if (placeOrder(db, outbox, stock, topic, "order-" + i, SKUS.get(random.nextInt(SKUS.size())),
                            1 + random.nextInt(5), i % 10 == 9)) {
                        appended++;
                    } else {
                        rolledBack++;
                    }
                    shipping.poll(consumer, Duration.ZERO);
                }
                shipping.awaitApplied(consumer, appended);
                // As if a relay had crashed after Kafka confirmed these and before it marked them: the next cycle
                // (the poll; an UPDATE does not notify) publishes them again under the same message-id.
                int republished = execute(db, "UPDATE " + outbox.table() + " SET published_at = NULL WHERE id IN"
                        + " (SELECT id FROM " + outbox.table() + " ORDER BY id LIMIT 25)");
                shipping.awaitReceived(consumer, appended + republished);
                return new Result(orders, appended, rolledBack, relay.publishedCount(), republished,
                        shipping.received, shipping.applied, shipping.duplicates, perSku(db, "SELECT sku, reserved"
                                + " FROM " + stock + " WHERE reserved > 0"),
                        perSku(db, "SELECT sku, sum(quantity)::bigint FROM " + shipments + " GROUP BY sku"));
            } finally {
                outbox.dropSchema(null);
                execute(db, "DROP TABLE IF EXISTS " + stock + ", " + shipments);
                deleteTopic(kafkaBootstrap, topic);
            }
        }
    }

    /**
     * The order service: reserves the stock and appends the event in one transaction. A failing order rolls both
     * back.
     *
     * @return whether the order committed
     */
    private static boolean placeOrder(HikariDataSource db, Outbox outbox, String stock, String topic, String orderId,
            String sku, int quantity, boolean fails) throws SQLException {
        try (Connection tx = db.getConnection()) {
            tx.setAutoCommit(false);
            try (PreparedStatement reserve = tx.prepareStatement(
                    "UPDATE " + stock + " SET reserved = reserved + ? WHERE sku = ?")) {
                reserve.setInt(1, quantity);
                reserve.setString(2, sku);
                reserve.executeUpdate();
            }
            outbox.append(tx, topic, sku, (orderId + ":" + sku + ":" + quantity).getBytes(StandardCharsets.UTF_8),
                    Map.of("type", "StockReserved"));
            if (fails) {
                tx.rollback(); // e.g. the payment step threw: no reservation, no event
                return false;
            }
            tx.commit();
            return true;
        }
    }

    /** The shipping service: one inbox transaction per record (claim, shipment row, completion). */
    private static final class Shipping {
        private final HikariDataSource db;
        private final PostgresDedupStore inbox;
        private final String shipments;
        int received;
        int applied;
        int duplicates;

        Shipping(HikariDataSource db, PostgresDedupStore inbox, String shipments) {
            this.db = db;
            this.inbox = inbox;
            this.shipments = shipments;
        }

        void poll(KafkaConsumer<String, byte[]> consumer, Duration timeout) throws SQLException {
            for (ConsumerRecord<String, byte[]> record : consumer.poll(timeout)) {
                received++;
                apply(record);
            }
            consumer.commitSync();
        }

        void awaitApplied(KafkaConsumer<String, byte[]> consumer, int count) throws SQLException {
            await(consumer, () -> applied >= count, "applied " + count);
        }

        void awaitReceived(KafkaConsumer<String, byte[]> consumer, int count) throws SQLException {
            await(consumer, () -> received >= count, "received " + count);
        }

        private void await(KafkaConsumer<String, byte[]> consumer, java.util.function.BooleanSupplier done,
                String what) throws SQLException {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while (!done.getAsBoolean()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("not " + what + " within a minute (received " + received
                            + ", applied " + applied + ")");
                }
                poll(consumer, Duration.ofMillis(200));
            }
        }

        private void apply(ConsumerRecord<String, byte[]> record) throws SQLException {
            Header id = record.headers().lastHeader("message-id");
            String messageId = new String(id.value(), StandardCharsets.UTF_8);
            String[] event = new String(record.value(), StandardCharsets.UTF_8).split(":");
            try (Connection tx = db.getConnection()) {
                tx.setAutoCommit(false);
                DedupStore store = inbox.inTransaction(tx);
                ClaimResult claimed = store.claim(messageId, LEASE);
                if (!(claimed instanceof Claim claim)) {
                    tx.rollback();
                    duplicates++; // shipped already, by a committed transaction
                    return;
                }
                try (PreparedStatement ship = tx.prepareStatement(
                        "INSERT INTO " + shipments + " (message_id, sku, quantity) VALUES (?, ?, ?)")) {
                    ship.setString(1, messageId);
                    ship.setString(2, event[1]);
                    ship.setInt(3, Integer.parseInt(event[2]));
                    ship.executeUpdate();
                }
                if (!store.complete(claim, RETENTION, null)) {
                    throw new IllegalStateException("the claim on " + messageId + " was taken over");
                }
                tx.commit();
                applied++;
            }
        }
    }

    private static KafkaConsumer<String, byte[]> consumer(String bootstrap, String topic) {
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, topic,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new StringDeserializer(), new ByteArrayDeserializer());
        consumer.assign(List.of(new TopicPartition(topic, 0)));
        return consumer;
    }

    private static void createTopic(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    private static void deleteTopic(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
        }
    }

    private static int execute(HikariDataSource db, String sql) throws SQLException {
        try (Connection connection = db.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
            return statement.getUpdateCount();
        }
    }

    private static Map<String, Long> perSku(HikariDataSource db, String sql) throws SQLException {
        Map<String, Long> bySku = new TreeMap<>();
        try (Connection connection = db.getConnection(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(sql)) {
            while (rows.next()) {
                bySku.put(rows.getString(1), rows.getLong(2));
            }
        }
        return bySku;
    }
}
