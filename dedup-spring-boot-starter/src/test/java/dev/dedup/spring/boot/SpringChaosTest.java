package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The crash chaos run of the Spring entry points, on the real brokers and PostgreSQL with real processes: {@link
 * #MESSAGES} messages with unique ids to a Kafka topic (3 partitions) and as many to a RabbitMQ queue (durable,
 * persistent, with a dead-letter queue), 10% of each published twice; three Boot applications ({@link
 * ChaosApplicationMain}: {@link Idempotent} on a {@code @KafkaListener} and on a {@code @RabbitListener} method, one
 * listener thread each, the starter's PostgreSQL store with a 2 s lease). While effects are missing the driver
 * SIGKILLs a random ready application every 1-2 s and starts a new one; then the survivors drain.
 *
 * <p>Asserted: every message took effect (0 lost), nothing dead-lettered (nor a Kafka record given up), and doubles
 * within the stated limit: without an inbox, each call caught by a death between its effect's commit and its
 * completion may run once more after its lease lapses, and so may each completion the store refused (its lease lost).
 * That is at most 2 per kill here (one call per listener thread), and the test counts the calls actually in that
 * window at each kill. The figures are printed and appended to {@code target/spring-chaos.txt}.
 *
 * <p>Sized for the test command (about 80 s on 2 cores); {@code -Ddedup.chaos.spring.messages=5000} makes the longer run of
 * the documented figures.
 */
@Timeout(420)
class SpringChaosTest {
    /** Messages per broker. */
    static final int MESSAGES = Integer.getInteger("dedup.chaos.spring.messages", 1_500);
    static final int PROCESSES = 3;
    static final int PARTITIONS = 3;
    /** Listener threads per application: one per broker, so at most 2 calls in the window at a kill. */
    static final int CALLS_PER_PROCESS = 2;
    static final long RUN_LIMIT_MILLIS = 300_000;
    /** How long an application works before it may be killed. */
    static final long WORK_MILLIS = 2_000;

    record Run(int messages, int kafkaRecords, int rabbitPublishes, int kills, int killsWhileMissing,
            int killsInWindow, long windowAtKills, long leaseLost, long lostKafka, long lostRabbit,
            long doubledKafka, long doubledRabbit, long deadLettered, long kafkaRecovered, int processes,
            long meanStartMillis, long effectsMillis, long millis, boolean drained) {
        long doubled() {
            return doubledKafka + doubledRabbit;
        }

        /** The stated limit, as counted: each call in the window at a kill, and each lost lease, once more. */
        long limit() {
            return windowAtKills + leaseLost;
        }

        @Override
        public String toString() {
            return String.format("spring chaos: %d messages per broker (%d Kafka records, %d RabbitMQ publishes),"
                            + " %d SIGKILLs (%d while effects were missing, %d with calls between effect and"
                            + " completion: %d calls), lease lost %d; lost Kafka %d / RabbitMQ %d, doubled Kafka %d /"
                            + " RabbitMQ %d (limit %d, at most %d x %d kills), dead-lettered %d, Kafka records given up"
                            + " %d; %d applications started, mean start %d ms; every message's effect after %.1f s, drained %s after %.1f s",
                    messages, kafkaRecords, rabbitPublishes, kills, killsWhileMissing, killsInWindow, windowAtKills,
                    leaseLost, lostKafka, lostRabbit, doubledKafka, doubledRabbit, limit(), CALLS_PER_PROCESS, kills,
                    deadLettered, kafkaRecovered, processes, meanStartMillis, effectsMillis / 1000.0, drained,
                    millis / 1000.0);
        }
    }

    @Test
    @DisplayName("Boot applications with @Idempotent Kafka and RabbitMQ listeners SIGKILLed at random: 0 lost,"
            + " 0 dead-lettered, doubles <= calls between effect and completion at the kills")
    void idempotentListenersUnderKills() throws Exception {
        Run run = run(new Random(23));
        String line = run.toString();
        System.out.println("[spring chaos] " + line);
        Files.writeString(Path.of("target", "spring-chaos.txt"), line + System.lineSeparator(),
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);

        assertThat(run.drained()).as("every message taken, every record committed within the run's limit").isTrue();
        assertThat(run.lostKafka()).as("Kafka messages without an effect").isZero();
        assertThat(run.lostRabbit()).as("RabbitMQ messages without an effect").isZero();
        assertThat(run.deadLettered()).as("RabbitMQ messages dead-lettered").isZero();
        assertThat(run.kafkaRecovered()).as("Kafka records the error handler gave up on").isZero();
        assertThat(run.doubled()).as("doubles").isLessThanOrEqualTo(run.limit());
        assertThat(run.limit()).isLessThanOrEqualTo((long) CALLS_PER_PROCESS * run.kills() + run.leaseLost());
        // The kills hit work in progress, not only idle applications.
        assertThat(run.killsWhileMissing()).as("kills while effects were missing").isPositive();
    }

    private Run run(Random random) throws Exception {
        String run = Servers.unique("spring_chaos").replace('-', '_');
        String table = run + "_effects";
        String topic = Servers.unique("spring-chaos");
        String queue = run + ".work";
        String dead = run + ".dead";
        Path dir = Files.createTempDirectory("spring-chaos-");
        try (Connection db = postgres(); var statement = db.createStatement()) {
            statement.execute("CREATE TABLE " + table + " (broker text NOT NULL, id text NOT NULL,"
                    + " process text NOT NULL, at timestamptz NOT NULL DEFAULT now())");
        }
        // The store's table before the applications start, so three do not create it at once.
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setURL(Servers.postgresJdbcUrl());
        PostgresDedupStore.builder(dataSource).createSchema(true).namespace(run).build().close();

        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(Servers.rabbitMqUrl());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, Servers.kafkaBootstrap()));
                com.rabbitmq.client.Connection rabbit = factory.newConnection("spring-chaos-driver");
                Channel channel = rabbit.createChannel()) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
            shortSessions(admin, topic);
            channel.queueDeclare(dead, true, false, false, null);
            channel.queueDeclare(queue, true, false, false,
                    Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", dead));
            List<String> ids = ids(random);
            int records = publishKafka(topic, ids, random);
            publishRabbit(channel, queue, ids);
            Map<TopicPartition, Long> end = endOffsets(admin, topic);

            Fleet fleet = new Fleet(dir, List.of(
                    "--spring.datasource.url=" + Servers.postgresJdbcUrl(),
                    "--spring.datasource.hikari.maximum-pool-size=4",
                    "--dedup.namespace=" + run,
                    "--dedup.lease=2s",
                    "--spring.kafka.bootstrap-servers=" + Servers.kafkaBootstrap(),
                    "--spring.kafka.consumer.auto-offset-reset=earliest",
                    "--spring.kafka.consumer.max-poll-records=50",
                    // The new group protocol: a member's partitions move 1 s after its death (shortSessions).
                    "--spring.kafka.consumer.properties.group.protocol=consumer",
                    "--spring.rabbitmq.addresses=" + Servers.rabbitMqUrl(),
                    "--spring.rabbitmq.listener.simple.prefetch=10",
                    "--chaos.topic=" + topic, "--chaos.queue=" + queue, "--chaos.table=" + table), random);
            try {
                return chaos(fleet, channel, admin, topic, queue, dead, table, end, records, ids.size());
            } finally {
                fleet.killAll();
                channel.queueDelete(queue);
                channel.queueDelete(dead);
                admin.deleteTopics(List.of(topic));
                try (Connection db = postgres(); var statement = db.createStatement()) {
                    statement.execute("DROP TABLE IF EXISTS " + table);
                }
            }
        }
    }

    private Run chaos(Fleet fleet, Channel channel, Admin admin, String topic, String queue, String dead,
            String table, Map<TopicPartition, Long> end, int records, int rabbitPublishes) throws Exception {
        long started = System.nanoTime();
        fleet.start(PROCESSES);
        fleet.scheduleKill();
        boolean drained = false;
        long settledSince = 0;
        long effectsAt = 0;
        while (!drained && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(RUN_LIMIT_MILLIS)) {
            Thread.sleep(100);
            assertThat(fleet.sum(ChaosApplicationMain.ERRORS)).as("application errors; %s",
                    ConsumerProcess.firstError(fleet.log)).isZero();
            fleet.restartDead();
            boolean missing = missingEffects(table) > 0;
            if (!missing && effectsAt == 0) {
                effectsAt = System.nanoTime();
            }
            if (missing) {
                fleet.killWhenDue();
                settledSince = 0;
                continue;
            }
            // Every message took effect: no more kills. Drained once the survivors have committed every record,
            // taken every message and are idle for a second.
            boolean settled = committed(admin, topic).equals(end) && channel.messageCount(queue) == 0
                    && fleet.idle();
            if (!settled) {
                settledSince = 0;
            } else if (settledSince == 0) {
                settledSince = System.nanoTime();
            } else if (System.nanoTime() - settledSince > TimeUnit.SECONDS.toNanos(1)) {
                // Killed (counted like the others), so the broker requeues anything still unacked: over if
                // nothing came back, else new applications carry on.
                drained = fleet.settle(channel, queue);
                settledSince = 0;
            }
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        fleet.killAll();
        long[] kafka = effects(table, "kafka");
        long[] rabbit = effects(table, "rabbit");
        return new Run(MESSAGES, records, rabbitPublishes, fleet.kills, fleet.killsWhileMissing,
                fleet.killsInWindow, fleet.windowAtKills, fleet.sum(ChaosApplicationMain.LEASE_LOST),
                MESSAGES - kafka[0], MESSAGES - rabbit[0], kafka[1] - kafka[0], rabbit[1] - rabbit[0],
                channel.messageCount(dead), fleet.sum(ChaosApplicationMain.KAFKA_RECOVERED), fleet.all.size(),
                fleet.sum(ChaosApplicationMain.START_MILLIS) / Math.max(1, fleet.sum(ChaosApplicationMain.STARTS)),
                effectsAt == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(effectsAt - started), millis, drained);
    }

    /** The applications: started, killed at random, restarted when they die, as a supervisor would. */
    private final class Fleet {
        final Path dir;
        final Path log;
        final List<String> arguments;
        final Random random;
        final List<ConsumerProcess> all = new ArrayList<>();
        final List<ConsumerProcess> live = new ArrayList<>();
        final Map<ConsumerProcess, Long> readySince = new HashMap<>();
        int kills;
        int killsWhileMissing;
        int killsInWindow;
        long windowAtKills;
        long nextKill;

        Fleet(Path dir, List<String> arguments, Random random) {
            this.dir = dir;
            this.log = dir.resolve("applications.log");
            this.arguments = arguments;
            this.random = random;
        }

        void start(int count) {
            for (int i = 0; i < count; i++) {
                int serial = all.size() + 1;
                ConsumerProcess process = ConsumerProcess.start("application-" + serial, ChaosApplicationMain.class,
                        dir.resolve("application-" + serial + ".board"), ChaosApplicationMain.SLOTS, log, arguments);
                all.add(process);
                live.add(process);
            }
        }

        /**
         * A random application at work, when a kill is due: one that has been ready for {@link #WORK_MILLIS} (Boot's
         * start takes a few seconds on 2 cores, and a Kafka member needs its partitions before it works), so kills
         * land in the work, not in start-ups.
         */
        void killWhenDue() throws InterruptedException {
            long now = System.currentTimeMillis();
            for (ConsumerProcess process : live) {
                if (process.board().get(ChaosBoard.PHASE) == ChaosApplicationMain.READY) {
                    readySince.putIfAbsent(process, now);
                }
            }
            if (now < nextKill) {
                return;
            }
            List<ConsumerProcess> working = live.stream()
                    .filter(process -> readySince.containsKey(process) && now - readySince.get(process) >= WORK_MILLIS)
                    .toList();
            if (working.isEmpty()) {
                return;
            }
            kill(working.get(random.nextInt(working.size())));
            killsWhileMissing++;
            start(1);
            scheduleKill();
        }

        void kill(ConsumerProcess victim) throws InterruptedException {
            live.remove(victim);
            victim.kill();
            kills++;
            // Read after the death: what the board held when the process was frozen.
            long window = victim.board().get(ChaosApplicationMain.WINDOW);
            windowAtKills += window;
            if (window > 0) {
                killsInWindow++;
            }
        }

        void restartDead() {
            for (ConsumerProcess process : List.copyOf(live)) {
                if (!process.isAlive()) {
                    live.remove(process);
                    start(1);
                }
            }
        }

        boolean idle() {
            return live.stream().allMatch(process -> process.isAlive()
                    && process.board().get(ChaosApplicationMain.HANDLING) == 0
                    && process.board().get(ChaosApplicationMain.WINDOW) == 0);
        }

        boolean settle(Channel channel, String queue) throws Exception {
            for (ConsumerProcess process : List.copyOf(live)) {
                kill(process);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (channel.consumerCount(queue) > 0) {
                assertThat(System.nanoTime()).as("the broker noticed the killed applications").isLessThan(deadline);
                Thread.sleep(20);
            }
            if (channel.messageCount(queue) == 0) {
                return true;
            }
            start(PROCESSES);
            return false;
        }

        /** Kills every application, even when interrupted (a test timeout): kill() signals before it waits. */
        void killAll() throws InterruptedException {
            InterruptedException interrupted = null;
            for (ConsumerProcess process : all) {
                try {
                    if (process.isAlive()) {
                        process.kill();
                    }
                } catch (InterruptedException e) {
                    interrupted = e;
                }
            }
            live.clear();
            if (interrupted != null) {
                throw interrupted;
            }
        }

        long sum(int slot) {
            return all.stream().mapToLong(process -> process.board().get(slot)).sum();
        }

        void scheduleKill() {
            nextKill = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
        }
    }

    /** The ids, shuffled, then 10% of them again each somewhere after their first copy (a producer's retry). */
    private static List<String> ids(Random random) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            ids.add("m" + i);
        }
        Collections.shuffle(ids, random);
        List<String> published = new ArrayList<>(ids);
        for (String id : ids.subList(0, MESSAGES / 10)) {
            int first = published.indexOf(id);
            published.add(first + 1 + random.nextInt(published.size() - first), id);
        }
        return published;
    }

    private static int publishKafka(String topic, List<String> ids, Random random) throws Exception {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, Servers.kafkaBootstrap());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
                new StringSerializer())) {
            List<Future<?>> acks = new ArrayList<>();
            for (String id : ids) {
                var record = new ProducerRecord<String, String>(topic, random.nextInt(PARTITIONS), null, id);
                record.headers().add("message-id", id.getBytes(StandardCharsets.UTF_8));
                acks.add(producer.send(record));
            }
            for (Future<?> ack : acks) {
                ack.get(1, TimeUnit.MINUTES);
            }
        }
        return ids.size();
    }

    private static void publishRabbit(Channel channel, String queue, List<String> ids) throws Exception {
        channel.confirmSelect();
        for (String id : ids) {
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
                    id.getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(60_000);
    }

    /** A killed member's partitions go to the others after 1 s without its heartbeat, not the default 45 s. */
    private static void shortSessions(Admin admin, String group) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "1000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("consumer.heartbeat.interval.ms", "250"),
                        AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> end = new HashMap<>();
        admin.listOffsets(request).all().get(30, TimeUnit.SECONDS)
                .forEach((partition, info) -> end.put(partition, info.offset()));
        return end;
    }

    private static Map<TopicPartition, Long> committed(Admin admin, String group) throws Exception {
        Map<TopicPartition, Long> committed = new HashMap<>();
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        offsets.forEach((partition, offset) -> {
            if (offset != null) {
                committed.put(partition, offset.offset());
            }
        });
        return committed;
    }

    /** Messages of both brokers without an effect yet. */
    private static long missingEffects(String table) throws SQLException {
        try (Connection db = postgres(); var statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(DISTINCT (broker, id)) FROM " + table)) {
            rows.next();
            return 2L * MESSAGES - rows.getLong(1);
        }
    }

    /** {@return the distinct ids with an effect, and the effect rows, of one broker} */
    private static long[] effects(String table, String broker) throws SQLException {
        try (Connection db = postgres(); var statement = db.prepareStatement("SELECT count(DISTINCT id), count(*)"
                + " FROM " + table + " WHERE broker = ?")) {
            statement.setString(1, broker);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return new long[] {rows.getLong(1), rows.getLong(2)};
            }
        }
    }

    private static Connection postgres() throws SQLException {
        return DriverManager.getConnection(Servers.postgresJdbcUrl());
    }
}
