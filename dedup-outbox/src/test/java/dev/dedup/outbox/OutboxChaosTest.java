package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The issue's end-to-end proof, on the real PostgreSQL (or MariaDB) and Kafka or RabbitMQ with real processes: a
 * service commits 1,500 orders (400 on MariaDB, a shorter run beside the PostgreSQL ones), each with an outbox event in
 * the same transaction, and rolls back 10% more; two relay processes ({@link RelayProcessMain}) publish the outbox to
 * the broker, and a consumer process ({@link InboxConsumerMain}) applies each event with the same database's inbox to
 * a second schema. The driver SIGKILLs a relay every 1-2 s and the
 * consumer every 1-2 s once it consumes ({@link ProcessFleet}), starting a new one each time; the relays also halt themselves now and then between the
 * broker's acknowledgement and the mark (the window where the outbox publishes twice by design). Asserted: every
 * committed order applied exactly once, no rolled-back order applied, the duplicates delivered counted and all
 * absorbed by the inbox, and each key's orders applied in commit order.
 *
 * <p>One consumer per broker: a RabbitMQ queue keeps each key's order only with a single consumer, and on Kafka a
 * killed member's partitions wait for its session (1 s here) before the next one gets them.
 */
class OutboxChaosTest {
    /** The broker the relays publish to. */
    enum Broker { KAFKA, RABBITMQ }

    /** One run: the outbox's and the inbox's database, the broker, how many orders, the pause after each. */
    record Run(TestDatabase database, Broker broker, int orders, int pauseMillis) {
        @Override
        public String toString() {
            return database + " to " + broker + ", " + orders + " orders";
        }
    }

    static Stream<Run> runs() {
        // On MariaDB a shorter run, its orders paced so that the kills still land while they are written.
        return Stream.of(new Run(TestDatabase.POSTGRESQL, Broker.KAFKA, 1_500, 2),
                new Run(TestDatabase.POSTGRESQL, Broker.RABBITMQ, 1_500, 2),
                new Run(TestDatabase.MARIADB, Broker.RABBITMQ, 400, 10));
    }

    private static final int KEYS = 20;
    private static final int RELAYS = 2;
    private static final int CONSUMERS = 1;
    /** Chance that a relay halts itself after the broker acknowledged a batch, before marking it. */
    private static final double HALT = 0.03;
    private static final long RUN_LIMIT_MILLIS = 75_000;

    @ParameterizedTest(name = "{0}")
    @MethodSource("runs")
    @DisplayName("relays and consumer SIGKILLed at random: every committed order applied once, rolled back none,"
            + " duplicates absorbed")
    void exactlyOnceEndToEndUnderKills(Run run) throws Exception {
        Broker broker = run.broker();
        TestDatabase database = run.database();
        Random random = new Random(17);
        String prefix = unique("chaos");
        String brokerName = broker.name().toLowerCase(Locale.ROOT);
        String destination = broker == Broker.KAFKA ? OutboxTestSupport.createTopic("outbox-chaos", 3)
                : prefix + "_exchange";
        String applied = prefix + "_shipping.applied";
        Path dir = Files.createTempDirectory("outbox-chaos-");
        try (HikariDataSource pool = database.pool(6)) {
            Outbox outbox = Outbox.builder(pool).table(prefix + "_outbox").build();
            outbox.createSchema();
            Runnable dropInbox = database.createInbox(pool, prefix + "_inbox");
            execute(pool, "CREATE TABLE " + prefix + "_orders (order_no int PRIMARY KEY)");
            execute(pool, database.createApplied(prefix + "_shipping"));
            List<String> common = List.of("database=" + database.name(), "jdbcUrl=" + database.jdbcUrl(),
                    "broker=" + brokerName);
            List<String> relayArguments = new ArrayList<>(common);
            relayArguments.addAll(List.of("table=" + outbox.table(), broker == Broker.KAFKA ? "bootstrap="
                    + OutboxTestSupport.kafkaBootstrap() : "rabbitUrl=" + OutboxTestSupport.rabbitUrl(),
                    "halt=" + HALT));
            ProcessFleet relays = new ProcessFleet("relay", RelayProcessMain.class,
                    RelayProcessMain.Slot.COUNT.ordinal(), -1, dir, relayArguments, random);
            List<String> consumerArguments = new ArrayList<>(common);
            consumerArguments.addAll(List.of("inbox=" + prefix + "_inbox", "applied=" + applied));
            consumerArguments.addAll(broker == Broker.KAFKA ? kafkaGroup(destination) : rabbitQueue(destination));
            ProcessFleet consumers = new ProcessFleet("consumer", InboxConsumerMain.class,
                    InboxConsumerMain.Slot.COUNT.ordinal(), InboxConsumerMain.STARTING, dir, consumerArguments, random);
            Service service = new Service(pool, outbox, destination, prefix, run);
            try {
                Thread writer = new Thread(service, "service");
                writer.start();
                relays.start(RELAYS);
                consumers.start(CONSUMERS);
                long started = System.nanoTime();
                long writing = 0;
                boolean drained = false;
                while (!drained && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(RUN_LIMIT_MILLIS)) {
                    Thread.sleep(100);
                    if (writing == 0 && !writer.isAlive()) {
                        writing = System.nanoTime() - started;
                    }
                    if (writer.isAlive()) {     // kills while orders are written; then the system drains
                        relays.killWhenDue();
                        consumers.killWhenDue();
                    }
                    relays.restartDead();
                    consumers.restartDead();
                    drained = !writer.isAlive() && outbox.pendingCount() == 0
                            && count(pool, applied) == service.committed.size();
                }
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                Thread.sleep(1_000);        // a republished copy still on its way arrives and is absorbed
                relays.killAll();
                consumers.killAll();
                writer.join(10_000);

                long halts = relays.sum(RelayProcessMain.Slot.HALTS.ordinal());
                long deliveries = consumers.sum(InboxConsumerMain.Slot.DELIVERIES.ordinal());
                long absorbed = consumers.sum(InboxConsumerMain.Slot.DUPLICATES.ordinal());
                long duplicatesDelivered = deliveries - run.orders();
                // A delivery a kill cut short: neither committed nor counted as absorbed (at most one per process end).
                long cutShort = deliveries - run.orders() - absorbed;
                long consumerEnds = consumers.kills() + consumers.deaths();
                System.out.printf("outbox chaos, %s: %d orders committed, %d rolled back; %d relay processes,"
                                + " %d SIGKILLs (by phase idle/publishing/confirmed-not-marked %s), %d self-halts"
                                + " after the broker's acknowledgement, %d events confirmed; %d consumer processes,"
                                + " %d SIGKILLs (by phase idle/applying/applied-not-acknowledged/starting %s), %d other"
                                + " deaths; %d deliveries, %d duplicates delivered, %d absorbed by the inbox, %d cut"
                                + " short by a kill; relay errors %d, consumer errors %d; %.1f s (writing %.1f s)%n",
                        run, service.committed.size(), service.rolledBack.size(), relays.processes(),
                        relays.kills(), relays.killsByPhase(), halts,
                        relays.sum(RelayProcessMain.Slot.CONFIRMED.ordinal()), consumers.processes(),
                        consumers.kills(), consumers.killsByPhase(), consumers.deaths(), deliveries,
                        duplicatesDelivered, absorbed, cutShort, relays.sum(RelayProcessMain.Slot.ERRORS.ordinal()),
                        consumers.sum(InboxConsumerMain.Slot.ERRORS.ordinal()), millis / 1000.0,
                        TimeUnit.NANOSECONDS.toMillis(writing) / 1000.0);

                assertThat(service.failure.get()).as("service failure").isNull();
                assertThat(drained).as("every committed event applied within the limit; see " + relays.log()
                        + " and " + consumers.log()).isTrue();
                assertThat(consumers.sum(InboxConsumerMain.Slot.ERRORS.ordinal())).as("consumer errors; %s",
                        ConsumerProcess.firstError(consumers.log())).isZero();
                assertThat(service.committed).hasSize(run.orders());
                assertThat(relays.kills()).as("relay kills").isPositive();
                assertThat(consumers.kills()).as("consumer kills").isPositive();
                assertThat(timesApplied(pool, applied)).as("order_no -> times applied").hasSize(run.orders())
                        .allSatisfy((order, times) -> assertThat(times).as("order " + order).isEqualTo(1))
                        .containsOnlyKeys(service.committed);
                assertThat(column(pool, "SELECT message_id FROM " + applied))
                        .as("no event of a rolled-back order ever applied")
                        .doesNotContainAnyElementsOf(service.rolledBackIds);
                assertThat(cutShort).as("every duplicate delivered absorbed by the inbox, but the deliveries a kill"
                        + " cut short").isBetween(0L, consumerEnds);
                if (halts > 0) {
                    assertThat(duplicatesDelivered).as("each halt after the acknowledgement republishes its batch")
                            .isGreaterThanOrEqualTo(halts);
                }
                firstApplied(pool, applied).forEach((sku, orders) -> assertThat(orders).as("key " + sku).isSorted());
            } finally {
                relays.killAll();
                consumers.killAll();
                if (broker == Broker.RABBITMQ) {
                    deleteRabbitQueue(destination);
                }
                outbox.dropSchema(null);
                dropInbox.run();
                execute(pool, "DROP TABLE IF EXISTS " + prefix + "_orders", database.dropSchema(prefix + "_shipping"));
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
        private final Run run;

        Service(HikariDataSource pool, Outbox outbox, String destination, String prefix, Run run) {
            this.pool = pool;
            this.outbox = outbox;
            this.destination = destination;
            this.orders = prefix + "_orders";
            this.run = run;
        }

        @Override
        public void run() {
            try {
                int orderNo = 0;
                while (committed.size() < run.orders()) {
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
                    Thread.sleep(run.pauseMillis());    // seconds of orders, so the kills land while they are written
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }
    }

    /** The consumers' group, whose killed members give their partitions up after 1 s instead of 45 s. */
    private static List<String> kafkaGroup(String topic) throws Exception {
        String group = unique("inbox");
        try (Admin admin = OutboxTestSupport.admin()) {
            OutboxTestSupport.shortSessions(admin, group);
        }
        return List.of("topic=" + topic, "group=" + group);
    }

    /** A topic exchange routing every key to one queue, which the consumers read. */
    private static List<String> rabbitQueue(String exchange) throws Exception {
        try (com.rabbitmq.client.Connection connection = OutboxTestSupport.rabbitFactory().newConnection("chaos")) {
            Channel channel = connection.createChannel();
            channel.exchangeDeclare(exchange, "topic", false, false, null);
            channel.queueDeclare(exchange + "_queue", false, false, false, null);
            channel.queueBind(exchange + "_queue", exchange, "#");
        }
        return List.of("queue=" + exchange + "_queue");
    }

    private static void deleteRabbitQueue(String exchange) throws Exception {
        try (com.rabbitmq.client.Connection connection = OutboxTestSupport.rabbitFactory().newConnection("chaos")) {
            Channel channel = connection.createChannel();
            channel.queueDelete(exchange + "_queue");
            channel.exchangeDelete(exchange);
        }
    }

    private static Map<Integer, Integer> timesApplied(HikariDataSource pool, String applied) throws SQLException {
        Map<Integer, Integer> times = new HashMap<>();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT order_no, applied FROM " + applied)) {
            while (rows.next()) {
                times.put(rows.getInt(1), rows.getInt(2));
            }
        }
        return times;
    }

    /** Each key's orders in the order they were first applied. */
    private static Map<String, List<Integer>> firstApplied(HikariDataSource pool, String applied) throws SQLException {
        Map<String, List<Integer>> orders = new HashMap<>();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT sku, order_no FROM " + applied + " ORDER BY seq")) {
            while (rows.next()) {
                orders.computeIfAbsent(rows.getString(1), sku -> new ArrayList<>()).add(rows.getInt(2));
            }
        }
        return orders;
    }

    private static List<String> column(HikariDataSource pool, String query) throws SQLException {
        List<String> values = new ArrayList<>();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet rows = statement.executeQuery(query)) {
            while (rows.next()) {
                values.add(rows.getString(1));
            }
        }
        return values;
    }

    private static long count(HikariDataSource pool, String table) throws SQLException {
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*) FROM " + table)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static void execute(HikariDataSource pool, String... sql) throws SQLException {
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }
}
