package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.kafka.ChaosConsumerMain.Slot;
import dev.dedup.tck.FaultProxy;
import dev.dedup.tck.ServerOutages;
import dev.dedup.tck.chaos.ChaosRunSize;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Chaos on the real broker and servers with real processes: {@link ChaosRunSize#messages()} (3,000 unless set)
 * reserve messages with unique ids, 10% published twice, three consumer processes ({@link ChaosConsumerMain}) in one
 * group; the driver SIGKILLs a random consumer every 1-2 s (after freezing it to read where it stood) and starts a
 * new one, and consumers also halt themselves at chosen points, counting where. Every record's effect is an
 * increment plus an effect-log row in PostgreSQL. Asserted, per store: nothing lost; with the processor's PostgreSQL
 * inbox (claims, effects and settle in one transaction per partition batch) nothing doubled; with a store outside the
 * effect's transaction at most one double per death between effect and completion, and in the batch mode (one settle
 * per partition batch) at most the effects not yet settled at each death; the same with the store gone for 5 s (Redis
 * cut off at a proxy; PostgreSQL stopped, under the inbox), with processing back within 5 s of its return; the naive
 * consumer, the control, doubles.
 */
class ChaosOnKafkaTest {
    private static final int MESSAGES = ChaosRunSize.messages();
    private static final int SHORT_RUN_MESSAGES = ChaosRunSize.shortRunMessages();
    private static final int PARTITIONS = 3;
    private static final int CONSUMERS = 3;
    /** Chance of a self-halt before and after each effect. */
    private static final double HALT = 0.0005;
    /** Chance of a self-halt after a poll's completions, before its commit. */
    private static final double HALT_AFTER_COMPLETION = 0.02;
    private static final long RUN_LIMIT_MILLIS = 300_000;
    /** How long the store is gone in the outage runs. */
    private static final long OUTAGE_MILLIS = 5_000;

    /** How the consumers process records; NAIVE is the control, without dedup. */
    enum Mode { POSTGRES_INBOX, POSTGRES, REDIS, REDIS_BATCH, NAIVE }

    /** How the store goes away and comes back. */
    record Outage(Runnable down, Runnable up) {}

    record Run(String label, int messages, int published, long deliveries, int kills, Map<Long, Integer> killsByPhase,
            long unsettledAtKills, Map<Slot, Long> counters, int lost, int doubled, int applications, long millis,
            boolean drained, long recoveryMillis) {
        long count(Slot slot) {
            return counters.getOrDefault(slot, 0L);
        }

        /** Deaths and unstored completions that left an effect without its completion: the documented limit. */
        long betweenEffectAndCompletion() {
            return killsByPhase.getOrDefault(ChaosConsumerMain.EFFECT_TO_COMPLETION, 0)
                    + count(Slot.HALT_AFTER_EFFECT) + count(Slot.LEASE_LOST);
        }

        /**
         * Effects without their settle at each death (SIGKILLs and self-halts), and unstored completions: the batch
         * mode's documented limit, which counts every record of a batch that ran before the death.
         */
        long unsettledAtDeaths() {
            return unsettledAtKills + count(Slot.UNSETTLED_AT_HALT) + count(Slot.LEASE_LOST);
        }

        @Override
        public String toString() {
            return String.format("chaos %s: %d messages (%d records), %d deliveries, %d SIGKILLs (by phase %s),"
                            + " self-halts before effect %d / after effect %d / after completion %d;"
                            + " %d deaths between effect and completion, %d effects unsettled at deaths; lost %d,"
                            + " doubled %d, applications %d;"
                            + " outcomes processed %d, already processed %d, in progress elsewhere %d, failed %d,"
                            + " lease lost %d; inbox records rolled back %d; reconnects to PostgreSQL %d; starts that waited for a"
                            + " server %d; deaths of the Kafka client's race %d; recovery after outage %d ms; %.1f s",
                    label, messages, published, deliveries, kills, phases(killsByPhase), count(Slot.HALT_BEFORE_EFFECT),
                    count(Slot.HALT_AFTER_EFFECT), count(Slot.HALT_AFTER_COMPLETION), betweenEffectAndCompletion(),
                    unsettledAtDeaths(), lost, doubled, applications, count(Slot.PROCESSED), count(Slot.ALREADY_PROCESSED),
                    count(Slot.IN_PROGRESS_ELSEWHERE), count(Slot.FAILED), count(Slot.LEASE_LOST),
                    count(Slot.ROLLED_BACK), count(Slot.RECONNECTS), count(Slot.WAITS_AT_START),
                    count(Slot.CLIENT_RACES), recoveryMillis, millis / 1000.0);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Mode.class, names = {"POSTGRES_INBOX", "POSTGRES", "REDIS"})
    @DisplayName("per store: 0 lost; inbox 0 doubled, others doubled <= deaths between effect and completion")
    void dedupUnderKills(Mode mode) throws Exception {
        Run run = run(mode.toString(), MESSAGES, mode, redisAddress(), null, 7);
        System.out.println(run);
        assertDedup(run, mode == Mode.POSTGRES_INBOX);
        assertThat(run.count(Slot.RECONNECTS)).as("consumers that lost PostgreSQL").isZero();
    }

    @Test
    @DisplayName("batch mode (one settle per partition batch) on Redis: 0 lost, doubled <= effects unsettled at each"
            + " death")
    void batchModeUnderKills() throws Exception {
        // Short in the test command; the long run with -Ddedup.chaos.messages, as the other modes.
        int messages = Integer.getInteger("dedup.chaos.messages") != null ? MESSAGES : SHORT_RUN_MESSAGES / 2;
        Run run = run(Mode.REDIS_BATCH.toString(), messages, Mode.REDIS_BATCH, redisAddress(), null, 17);
        System.out.println(run);
        assertThat(run.drained()).as("every record committed within the run's limit").isTrue();
        assertThat(run.lost()).isZero();
        assertThat(run.doubled()).isLessThanOrEqualTo((int) run.unsettledAtDeaths());
        assertThat(run.count(Slot.DEAD_LETTERS)).isZero();
        assertThat(run.kills()).isPositive();
    }

    @Test
    @DisplayName("the control, a naive consumer under the same kills: 0 lost, but it doubles")
    void naiveConsumerDoubles() throws Exception {
        Run run = run("NAIVE (no dedup)", SHORT_RUN_MESSAGES, Mode.NAIVE, redisAddress(), null, 7);
        System.out.println(run);
        assertThat(run.drained()).isTrue();
        assertThat(run.lost()).isZero();
        assertThat(run.doubled()).as("at least every message published twice")
                .isGreaterThanOrEqualTo(SHORT_RUN_MESSAGES / 10);
    }

    @Test
    @DisplayName("Redis unreachable for 5 s mid-run: 0 lost, doubled within the limit, processing back within 5 s")
    void redisOutage() throws Exception {
        URI redis = KafkaTestSupport.redisUrl();
        // At the network, not by stopping the server: the test Redis runs without persistence, and a restart would
        // forget every claim (the documented limit of Redis without AOF), which is not an outage.
        try (FaultProxy proxy = FaultProxy.start(redis.getHost(), redis.getPort())) {
            Outage outage = new Outage(() -> {
                proxy.refuseConnections(true);
                proxy.cutConnections();
            }, proxy::heal);
            Run run = run("REDIS, 5 s outage", SHORT_RUN_MESSAGES, Mode.REDIS, proxy.host() + ":" + proxy.port(), outage,
                    11);
            System.out.println(run);
            assertDedup(run, false);
            // The outage reached the consumers: calls it failed, or, when the kills had every consumer restarting
            // while Redis was away, starts that found it gone and waited.
            assertThat(run.count(Slot.FAILED) + run.count(Slot.LEASE_LOST) + run.count(Slot.WAITS_AT_START))
                    .as("store calls the outage failed, or starts it made wait").isPositive();
            assertThat(run.recoveryMillis()).as("ms from the server's return to the next effect").isBetween(0L, 5_000L);
        }
    }

    @Test
    @DisplayName("PostgreSQL stopped for 5 s mid-run under the inbox: 0 lost, 0 doubled, processing back within 5 s")
    void inboxUnderPostgresOutage() throws Exception {
        // The effects live in the same server: the whole step stops; each consumer whose connection broke had its open
        // transaction rolled back with the server, reconnects once it answers, and reads the poll again.
        Outage outage = new Outage(() -> ServerOutages.pause("postgres"), () -> ServerOutages.resume("postgres"));
        Run run = run("POSTGRES_INBOX, 5 s outage", SHORT_RUN_MESSAGES, Mode.POSTGRES_INBOX, redisAddress(), outage,
                13);
        System.out.println(run);
        assertDedup(run, true);
        // Killed consumers are replaced during the outage too: some lose their connection, some start without one.
        assertThat(run.count(Slot.ROLLED_BACK) + run.count(Slot.WAITS_AT_START))
                .as("batches the outage rolled back, or consumers that waited for PostgreSQL at start").isPositive();
        assertThat(run.recoveryMillis()).as("ms from the server's return to the next effect").isBetween(0L, 5_000L);
    }

    private static void assertDedup(Run run, boolean inbox) {
        assertThat(run.drained()).as("every record committed within the run's limit").isTrue();
        assertThat(run.lost()).isZero();
        if (inbox) {
            // Claim, effect and completion commit or roll back together: a death between them leaves nothing.
            assertThat(run.doubled()).isZero();
        } else {
            assertThat(run.doubled()).isLessThanOrEqualTo((int) run.betweenEffectAndCompletion());
        }
        assertThat(run.count(Slot.DEAD_LETTERS)).isZero();
        assertThat(run.kills()).isPositive();
    }

    /** The kills by the phase the consumer was in, by name. */
    private static Map<String, Integer> phases(Map<Long, Integer> killsByPhase) {
        String[] names = {"idle", "handling", "effect-to-completion", "completed"};
        Map<String, Integer> phases = new java.util.LinkedHashMap<>();
        for (int phase = 0; phase < names.length; phase++) {
            phases.put(names[phase], killsByPhase.getOrDefault((long) phase, 0));
        }
        return phases;
    }

    private static String redisAddress() {
        URI redis = KafkaTestSupport.redisUrl();
        return redis.getHost() + ":" + redis.getPort();
    }

    private Run run(String label, int messages, Mode mode, String redis, Outage outage, long seed) throws Exception {
        Random random = new Random(seed);
        String topic = createTopic("chaos", PARTITIONS);
        String group = "chaos-" + unique();
        String table = "kafka_chaos_" + unique();
        Path dir = Files.createTempDirectory("kafka-chaos-");
        Path log = dir.resolve("consumers.log");
        List<String> arguments = List.of("mode=" + mode, "topic=" + topic, "group=" + group, "table=" + table,
                "namespace=kafka-chaos-" + unique(), "redis=" + redis, "halt=" + HALT,
                "haltAfterCompletion=" + HALT_AFTER_COMPLETION);
        int published = publish(topic, messages, random);
        try (Connection db = KafkaTestSupport.postgres()) {
            createTables(db, table);
        }
        List<ConsumerProcess> all = new ArrayList<>();
        try (Admin admin = KafkaTestSupport.admin()) {
            shortSessions(admin, group);
            Map<TopicPartition, Long> end = endOffsets(admin, topic);
            long started = System.nanoTime();
            List<ConsumerProcess> live = new ArrayList<>();
            for (int i = 0; i < CONSUMERS; i++) {
                live.add(start(all, dir, log, arguments, random));
            }
            Map<Long, Integer> killsByPhase = new HashMap<>();
            long unsettledAtKills = 0;
            int kills = 0;
            long nextKill = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
            Thread outageThread = null;
            long[] backAt = {0};
            long effectsAtBack = -1;
            long recoveryMillis = -1;
            boolean drained = false;
            while (!drained && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(RUN_LIMIT_MILLIS)) {
                Thread.sleep(100);
                assertThat(sum(all, Slot.ERRORS)).as("consumer errors; %s", ConsumerProcess.firstError(log)).isZero();
                if (System.currentTimeMillis() >= nextKill) {
                    ConsumerProcess victim = live.remove(random.nextInt(live.size()));
                    long phase = victim.kill();
                    killsByPhase.merge(phase, 1, Integer::sum);
                    long unsettled = victim.board().get(Slot.UNSETTLED.ordinal());
                    unsettledAtKills += unsettled;
                    if (unsettled > 1) {    // only the batch mode leaves more than the record in flight
                        System.out.printf("chaos %s: killed %s in phase %d with %d effects unsettled%n", label,
                                victim.name(), phase, unsettled);
                    }
                    kills++;
                    live.add(start(all, dir, log, arguments, random));
                    nextKill = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
                }
                // A consumer that halted itself (or lost its database) is restarted, like a supervised process.
                for (int i = 0; i < live.size(); i++) {
                    if (!live.get(i).isAlive()) {
                        live.set(i, start(all, dir, log, arguments, random));
                    }
                }
                if (outage != null && outageThread == null && sum(all, Slot.DELIVERIES) >= published / 4) {
                    outageThread = outage(outage, backAt);
                }
                if (backAt[0] != 0 && recoveryMillis < 0) {
                    long effects = effects(table);
                    if (effectsAtBack < 0) {
                        effectsAtBack = effects;
                    } else if (effects > effectsAtBack) {
                        recoveryMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - backAt[0]);
                    }
                }
                drained = committed(admin, group).equals(end);
            }
            if (outageThread != null) {
                outageThread.join(150_000);
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            for (ConsumerProcess consumer : live) {
                consumer.kill();
            }
            return figures(label, messages, table, all, published, kills, killsByPhase, unsettledAtKills, millis,
                    drained, recoveryMillis);
        } finally {
            for (ConsumerProcess consumer : all) {
                if (consumer.isAlive()) {
                    consumer.kill();
                }
            }
            try (Connection db = KafkaTestSupport.postgres(); var statement = db.createStatement()) {
                statement.execute("DROP TABLE IF EXISTS " + table + "_applied, " + table + "_log");
            }
        }
    }

    private static ConsumerProcess start(List<ConsumerProcess> all, Path dir, Path log, List<String> arguments,
            Random random) {
        int serial = all.size() + 1;
        List<String> withSeed = new ArrayList<>(arguments);
        withSeed.add("seed=" + random.nextLong());
        ConsumerProcess consumer = ConsumerProcess.start("consumer-" + serial, ChaosConsumerMain.class,
                dir.resolve("consumer-" + serial + ".board"), Slot.COUNT, log, withSeed);
        all.add(consumer);
        return consumer;
    }

    /** A killed member's partitions go to the others after 1 s without its heartbeat, not the default 45 s. */
    static void shortSessions(Admin admin, String group) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "1000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("consumer.heartbeat.interval.ms", "250"),
                        AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
    }

    /** Takes the store away for {@link #OUTAGE_MILLIS} on a thread of its own, while the kills go on. */
    private static Thread outage(Outage planned, long[] backAt) {
        Thread outage = new Thread(() -> {
            planned.down().run();
            try {
                Thread.sleep(OUTAGE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                planned.up().run();     // returns once the store can answer again
                backAt[0] = System.nanoTime();
            }
        }, "outage");
        outage.start();
        return outage;
    }

    private static long sum(Collection<ConsumerProcess> consumers, Slot slot) {
        long sum = 0;
        for (ConsumerProcess consumer : consumers) {
            sum += consumer.board().get(slot.ordinal());
        }
        return sum;
    }

    static void createTables(Connection db, String table) throws SQLException {
        try (var statement = db.createStatement()) {
            statement.execute("CREATE TABLE " + table + "_applied (id text PRIMARY KEY, applied int NOT NULL)");
            statement.execute("CREATE TABLE " + table + "_log (id text NOT NULL, consumer text NOT NULL,"
                    + " at timestamptz NOT NULL DEFAULT now())");
        }
    }

    /** Effect-log rows so far; -1 while PostgreSQL cannot answer. */
    private static long effects(String table) {
        try (Connection db = KafkaTestSupport.postgres(); var statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*) FROM " + table + "_log")) {
            rows.next();
            return rows.getLong(1);
        } catch (SQLException e) {
            return -1;
        }
    }

    /** Every id once, 10% of them again later, each on a random partition; returns the number of records. */
    private static int publish(String topic, int messages, Random random) throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            ids.add("m" + i);
        }
        List<String> records = new ArrayList<>(ids);
        Collections.shuffle(ids, random);
        for (String id : ids.subList(0, messages / 10)) {
            // Somewhere after the first copy, so the repeat is a redelivery from the producer's side.
            int first = records.indexOf(id);
            records.add(first + 1 + random.nextInt(records.size() - first), id);
        }
        int published = records.size();
        // Twice in CI a loaded broker left one partition's first batch unacknowledged until the delivery timeout
        // (after OUT_OF_ORDER_SEQUENCE_NUMBER from the idempotent producer): without idempotence, with short
        // timeouts, a stalled send fails fast and is sent again below. A send that landed twice is one more repeat.
        try (KafkaProducer<String, String> producer = KafkaTestSupport.producer(Map.of(
                org.apache.kafka.clients.producer.ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
                org.apache.kafka.clients.producer.ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000,
                org.apache.kafka.clients.producer.ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000))) {
            List<ProducerRecord<String, String>> sent = new ArrayList<>();
            List<java.util.concurrent.Future<?>> acks = new ArrayList<>();
            for (String id : records) {
                ProducerRecord<String, String> record = new ProducerRecord<>(topic, random.nextInt(PARTITIONS), null,
                        id);
                record.headers().add(RecordKeys.DEFAULT_HEADER, id.getBytes(StandardCharsets.UTF_8));
                sent.add(record);
                acks.add(producer.send(record));
            }
            producer.flush();
            // A send the broker did not acknowledge is sent again, as a producer at least once would: unchecked, it
            // would be a message never published, counted as lost.
            for (int i = 0; i < sent.size(); i++) {
                try {
                    acks.get(i).get(1, TimeUnit.MINUTES);
                } catch (java.util.concurrent.ExecutionException e) {
                    producer.send(sent.get(i)).get(1, TimeUnit.MINUTES);
                    published++;
                    System.out.printf("chaos publish: %s sent again after %s%n", sent.get(i).value(), e.getCause());
                }
            }
        }
        return published;
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> end = new HashMap<>();
        admin.listOffsets(request).all().get(30, TimeUnit.SECONDS).forEach((partition, info) -> end.put(partition,
                info.offset()));
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

    private static Run figures(String label, int messages, String table, List<ConsumerProcess> all, int published, int kills,
            Map<Long, Integer> killsByPhase, long unsettledAtKills, long millis, boolean drained, long recoveryMillis)
            throws Exception {
        int applied;
        int doubled;
        int applications;
        try (Connection db = KafkaTestSupport.postgres(); var statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*), coalesce(sum(applied - 1), 0),"
                        + " (SELECT count(*) FROM " + table + "_log) FROM " + table + "_applied")) {
            rows.next();
            applied = rows.getInt(1);
            doubled = rows.getInt(2);
            applications = rows.getInt(3);
        }
        Map<Slot, Long> counters = new EnumMap<>(Slot.class);
        for (Slot slot : Slot.values()) {
            if (slot != Slot.PHASE) {
                counters.put(slot, sum(all, slot));
            }
        }
        return new Run(label, messages, published, counters.get(Slot.DELIVERIES), kills, killsByPhase, unsettledAtKills,
                counters, messages - applied, doubled, applications, millis, drained, recoveryMillis);
    }
}
