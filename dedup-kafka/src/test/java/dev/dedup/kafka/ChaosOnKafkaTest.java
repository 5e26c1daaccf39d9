package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.kafka.CrashableConsumer.Figures;
import dev.dedup.kafka.CrashableConsumer.Point;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.FaultProxy;
import dev.dedup.tck.ServerOutages;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Chaos on the real broker and servers, sized for two cores: 1,000 messages with unique ids, 10% published twice,
 * three consumers in one group; a driver crashes a random consumer every 1-2 s (no completion, no commit from then
 * on) and starts a new one, and consumers also halt themselves at chosen points. Every record's effect is an
 * increment plus an effect-log row in PostgreSQL. Asserted, per store: nothing lost; with the PostgreSQL inbox
 * (claim, effect and completion in one transaction) nothing doubled; with a store outside the effect's transaction
 * at most one double per crash between effect and completion; the same with the store gone for 5 s (Redis cut off
 * at a proxy; PostgreSQL stopped, under the inbox), with processing back within 5 s of its return; the naive
 * consumer, the control, doubles.
 */
class ChaosOnKafkaTest {
    private static final int MESSAGES = 1_000;
    private static final int PARTITIONS = 3;
    private static final int CONSUMERS = 3;
    /** Chance of a self-halt before and after each effect. */
    private static final double SELF_HALT = 0.002;
    /** Chance of a self-halt after a poll's completions, before its commit. */
    private static final double SELF_HALT_AFTER_COMPLETION = 0.05;
    private static final long RUN_LIMIT_MILLIS = 80_000;
    /** A slow downstream, so that a run lasts long enough for crashes to land inside batches, not only between. */
    private static final long EFFECT_PAUSE_MILLIS = 8;

    /** How long the store is gone in the outage runs. */
    private static final long OUTAGE_MILLIS = 5_000;

    /** The stores of the runs. */
    enum Store {
        POSTGRES_INBOX, POSTGRES, REDIS;

        DedupStore open() {
            String namespace = "kafka-chaos-" + unique();
            if (this == REDIS) {
                java.net.URI redis = KafkaTestSupport.redisUrl();
                return KafkaTestSupport.redisStore(redis.getHost(), redis.getPort(), namespace);
            }
            return KafkaTestSupport.postgresStore(namespace);
        }
    }

    /** What the consumers run on: a store (null for the naive control), as an inbox or not, and an outage or null. */
    record Setup(DedupStore store, boolean inbox, Outage outage) {}

    /** How the store goes away and comes back; {@code database}: the effects' PostgreSQL goes away with it. */
    record Outage(Runnable down, Runnable up, boolean database) {}

    record Run(int published, long deliveries, int crashes, Map<Point, Integer> halts, long betweenEffectAndCompletion,
            int lost, int doubled, int applications, Map<String, Integer> outcomes, long deadLetters, long millis,
            boolean drained, long rolledBack, long databaseLosses, long recoveryMillis) {}

    @ParameterizedTest(name = "{0}")
    @EnumSource(Store.class)
    @DisplayName("per store: 0 lost; inbox 0 doubled, others doubled <= crashes between effect and completion")
    void dedupUnderCrashes(Store kind) throws Exception {
        try (DedupStore store = kind.open()) {
            Run run = run(new Setup(store, kind == Store.POSTGRES_INBOX, null), 7);
            print("dedup (" + kind + ")", run);
            assertDedup(run, kind == Store.POSTGRES_INBOX);
        }
    }

    @Test
    @DisplayName("Redis unreachable for 5 s mid-run: 0 lost, doubled within the limit, processing back within 5 s")
    void storeOutage() throws Exception {
        java.net.URI redis = KafkaTestSupport.redisUrl();
        // At the network, not by stopping the server: the test Redis runs without persistence, and a restart would
        // forget every claim (the documented limit of Redis without AOF), which is not an outage.
        try (FaultProxy proxy = FaultProxy.start(redis.getHost(), redis.getPort());
                DedupStore store = KafkaTestSupport.redisStore(proxy.host(), proxy.port(), "kafka-chaos-" + unique())) {
            Outage outage = new Outage(() -> {
                proxy.refuseConnections(true);
                proxy.cutConnections();
            }, proxy::heal, false);
            Run run = run(new Setup(store, false, outage), 11);
            print("dedup (REDIS, 5 s outage)", run);
            assertDedup(run, false);
            assertThat(run.outcomes().getOrDefault("Failed", 0) + run.outcomes().getOrDefault("LeaseLost", 0))
                    .as("store calls the outage failed").isPositive();
            assertThat(run.recoveryMillis()).as("ms from the server's return to the next completed record")
                    .isBetween(0L, 5_000L);
        }
    }

    @Test
    @DisplayName("PostgreSQL stopped for 5 s mid-run under the inbox: 0 lost, 0 doubled, processing back within 5 s")
    void inboxUnderPostgresOutage() throws Exception {
        try (DedupStore store = Store.POSTGRES_INBOX.open()) {
            // The effects live in the same server: the whole step stops, and each consumer whose connection broke
            // ends like a crashed process, its open transaction rolled back with the server.
            Outage outage = new Outage(() -> ServerOutages.pause("postgres"), () -> ServerOutages.resume("postgres"),
                    true);
            Run run = run(new Setup(store, true, outage), 13);
            print("dedup (POSTGRES_INBOX, 5 s outage)", run);
            assertDedup(run, true);
            assertThat(run.databaseLosses()).as("consumers that lost their connection in the outage").isPositive();
            assertThat(run.recoveryMillis()).as("ms from the server's return to the next completed record")
                    .isBetween(0L, 5_000L);
        }
    }

    private static void assertDedup(Run run, boolean inbox) {
        assertThat(run.drained()).as("every record committed within the run's limit").isTrue();
        assertThat(run.lost()).isZero();
        if (inbox) {
            // Claim, effect and completion commit or roll back together: a crash between them leaves nothing.
            assertThat(run.doubled()).isZero();
        } else {
            assertThat(run.doubled()).isLessThanOrEqualTo((int) run.betweenEffectAndCompletion());
        }
        assertThat(run.deadLetters()).isZero();
        assertThat(run.crashes()).isPositive();
    }

    @Test
    @DisplayName("the control, a naive consumer under the same crashes: 0 lost, but it doubles")
    void naiveConsumerDoubles() throws Exception {
        Run run = run(new Setup(null, false, null), 7);
        print("naive (no dedup)", run);
        assertThat(run.drained()).isTrue();
        assertThat(run.lost()).isZero();
        assertThat(run.doubled()).as("at least every message published twice").isGreaterThanOrEqualTo(MESSAGES / 10);
    }

    private Run run(Setup setup, long seed) throws Exception {
        Random random = new Random(seed);
        String topic = createTopic("chaos", PARTITIONS);
        String group = "chaos-" + unique();
        String table = "kafka_chaos_" + unique();
        int published = publish(topic, random);
        Figures figures = new Figures();
        try (Connection db = KafkaTestSupport.postgres()) {
            CrashableConsumer.createTables(db, table);
        }
        // No connection is kept across the run: a PostgreSQL outage would break it.
        try (Admin admin = KafkaTestSupport.admin()) {
            try {
                long started = System.nanoTime();
                int[] serial = {0};
                CrashableConsumer.HaltPlan selfHalts = (point, handled) -> switch (point) {
                    case IDLE -> false;
                    // Once per poll, not per record: a higher chance gives this point a few halts too.
                    case AFTER_COMPLETION -> random.nextDouble() < SELF_HALT_AFTER_COMPLETION;
                    default -> random.nextDouble() < SELF_HALT;
                };
                List<CrashableConsumer> consumers = new ArrayList<>();
                for (int i = 0; i < CONSUMERS; i++) {
                    consumers.add(start(group, topic, setup, table, selfHalts, figures, serial));
                }
                Map<TopicPartition, Long> end = endOffsets(admin, topic);
                int crashes = 0;
                Thread outage = null;
                long nextCrash = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
                boolean drained = false;
                while (!drained && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(RUN_LIMIT_MILLIS)) {
                    Thread.sleep(100);
                    if (System.currentTimeMillis() >= nextCrash) {
                        CrashableConsumer victim = consumers.remove(random.nextInt(consumers.size()));
                        victim.crash();
                        victim.join();
                        crashes++;
                        consumers.add(start(group, topic, setup, table, selfHalts, figures, serial));
                        nextCrash = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
                    }
                    // A consumer that halted itself is replaced, like a restarted process.
                    for (int i = 0; i < consumers.size(); i++) {
                        if (!consumers.get(i).isAlive()) {
                            consumers.set(i, start(group, topic, setup, table, selfHalts, figures, serial));
                        }
                    }
                    if (setup.outage() != null && outage == null && figures.deliveries.sum() >= MESSAGES / 4) {
                        outage = outage(setup.outage(), figures);
                    }
                    drained = committed(admin, group).equals(end);
                }
                if (outage != null) {
                    outage.join(150_000);
                }
                for (CrashableConsumer consumer : consumers) {
                    consumer.stop();
                }
                for (CrashableConsumer consumer : consumers) {
                    consumer.join();
                }
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertThat(figures.errors).isEmpty();
                if (setup.outage() == null || !setup.outage().database()) {
                    assertThat(figures.databaseLosses.sum()).as("consumers that lost PostgreSQL").isZero();
                }
                return figures(table, figures, published, crashes, millis, drained);
            } finally {
                try (Connection db = KafkaTestSupport.postgres()) {
                    CrashableConsumer.dropTables(db, table);
                }
            }
        }
    }

    private static CrashableConsumer start(String group, String topic, Setup setup, String table,
            CrashableConsumer.HaltPlan plan, Figures figures, int[] serial) {
        CrashableConsumer consumer = new CrashableConsumer("consumer-" + ++serial[0], group, topic, 100,
                setup.store(), table, plan, figures).effectPause(EFFECT_PAUSE_MILLIS);
        if (setup.inbox()) {
            consumer.inbox((PostgresDedupStore) setup.store());
        }
        return consumer.start();
    }

    /** Takes the store away for {@link #OUTAGE_MILLIS} on a thread of its own, while the crashes go on. */
    private static Thread outage(Outage planned, Figures figures) {
        Thread outage = new Thread(() -> {
            planned.down().run();
            try {
                Thread.sleep(OUTAGE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                planned.up().run();     // returns once the store can answer again
                figures.storeBackAt = System.nanoTime();
            }
        }, "outage");
        outage.start();
        return outage;
    }

    /** Every id once, 10% of them again later, each on a random partition; returns the number of records. */
    private static int publish(String topic, Random random) throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            ids.add("m" + i);
        }
        List<String> records = new ArrayList<>(ids);
        Collections.shuffle(ids, random);
        List<String> again = new ArrayList<>(ids.subList(0, MESSAGES / 10));
        for (String id : again) {
            // Somewhere after the first copy, so the repeat is a redelivery from the producer's side.
            int first = records.indexOf(id);
            records.add(first + 1 + random.nextInt(records.size() - first), id);
        }
        try (KafkaProducer<String, String> producer = KafkaTestSupport.producer()) {
            for (String id : records) {
                ProducerRecord<String, String> record = new ProducerRecord<>(topic, random.nextInt(PARTITIONS), null,
                        id);
                record.headers().add(RecordKeys.DEFAULT_HEADER, id.getBytes(StandardCharsets.UTF_8));
                producer.send(record);
            }
            producer.flush();
        }
        return records.size();
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new java.util.HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> end = new java.util.HashMap<>();
        admin.listOffsets(request).all().get(30, TimeUnit.SECONDS).forEach((partition, info) -> end.put(partition,
                info.offset()));
        return end;
    }

    private static Map<TopicPartition, Long> committed(Admin admin, String group) throws Exception {
        Map<TopicPartition, Long> committed = new java.util.HashMap<>();
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        offsets.forEach((partition, offset) -> {
            if (offset != null) {
                committed.put(partition, offset.offset());
            }
        });
        return committed;
    }

    private static Run figures(String table, Figures figures, int published, int crashes, long millis,
            boolean drained) throws Exception {
        int applied = 0;
        int doubled = 0;
        int applications = 0;
        try (Connection db = KafkaTestSupport.postgres(); var statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*), coalesce(sum(applied - 1), 0),"
                        + " (SELECT count(*) FROM " + table + "_log) FROM " + table + "_applied")) {
            rows.next();
            applied = rows.getInt(1);
            doubled = rows.getInt(2);
            applications = rows.getInt(3);
        }
        Map<Point, Integer> halts = new java.util.EnumMap<>(Point.class);
        for (Point point : Point.values()) {
            halts.put(point, figures.halts(point));
        }
        Map<String, Integer> outcomes = new java.util.TreeMap<>();
        figures.outcomes.forEach((type, count) -> outcomes.put(type, count.get()));
        long back = figures.storeBackAt;
        long completed = figures.firstCompletedAfterOutage.get();
        long recoveryMillis = back == 0 ? -1 : completed == 0 ? Long.MAX_VALUE
                : TimeUnit.NANOSECONDS.toMillis(completed - back);
        return new Run(published, figures.deliveries.sum(), crashes, halts, figures.betweenEffectAndCompletion(),
                MESSAGES - applied, doubled, applications, outcomes, figures.deadLetters.sum(), millis, drained,
                figures.rolledBack.sum(), figures.databaseLosses.sum(), recoveryMillis);
    }

    private static void print(String label, Run run) {
        System.out.printf("chaos %s: %d messages (%d records), %d handler runs, %d driver crashes, halts %s,"
                        + " %d crashes between effect and completion; lost %d, doubled %d, applications %d;"
                        + " outcomes %s; dead letters %d; inbox polls rolled back %d;"
                        + " consumers ended by a lost database connection %d; recovery after outage %d ms;"
                        + " %.1f s%n",
                label, MESSAGES, run.published(), run.deliveries(), run.crashes(), run.halts(),
                run.betweenEffectAndCompletion(), run.lost(), run.doubled(), run.applications(), run.outcomes(),
                run.deadLetters(), run.rolledBack(), run.databaseLosses(), run.recoveryMillis(),
                run.millis() / 1000.0);
    }
}
