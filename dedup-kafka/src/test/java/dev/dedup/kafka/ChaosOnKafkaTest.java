package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.kafka.CrashableConsumer.Figures;
import dev.dedup.kafka.CrashableConsumer.Point;
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

/**
 * Chaos on the real broker and PostgreSQL, sized for two cores: 2,000 messages with unique ids, 10% published twice,
 * three consumers in one group; a driver crashes a random consumer every 1-2 s (no completion, no commit from then
 * on) and starts a new one, and consumers also halt themselves at chosen points. Every record's effect is an
 * increment plus an effect-log row in PostgreSQL. Asserted: nothing lost; with dedup at most one double per crash
 * between effect and completion; the naive consumer, the control, doubles.
 */
class ChaosOnKafkaTest {
    private static final int MESSAGES = 2_000;
    private static final int PARTITIONS = 3;
    private static final int CONSUMERS = 3;
    /** Chance of a self-halt before and after each effect. */
    private static final double SELF_HALT = 0.002;
    /** Chance of a self-halt after a poll's completions, before its commit. */
    private static final double SELF_HALT_AFTER_COMPLETION = 0.05;
    private static final long RUN_LIMIT_MILLIS = 80_000;
    /** A slow downstream, so that a run lasts long enough for crashes to land inside batches, not only between. */
    private static final long EFFECT_PAUSE_MILLIS = 8;

    record Run(int published, long deliveries, int crashes, Map<Point, Integer> halts, long betweenEffectAndCompletion,
            int lost, int doubled, int applications, Map<String, Integer> outcomes, long deadLetters, long millis,
            boolean drained) {}

    @Test
    @DisplayName("with the PostgreSQL store: 0 lost, doubled <= crashes between effect and completion")
    void dedupUnderCrashes() throws Exception {
        try (DedupStore store = KafkaTestSupport.postgresStore("kafka-chaos-" + unique())) {
            Run run = run(store, 7);
            print("dedup (PostgreSQL store)", run);
            assertThat(run.drained()).as("every record committed within the run's limit").isTrue();
            assertThat(run.lost()).isZero();
            assertThat(run.doubled()).isLessThanOrEqualTo((int) run.betweenEffectAndCompletion());
            assertThat(run.deadLetters()).isZero();
            assertThat(run.crashes()).isPositive();
        }
    }

    @Test
    @DisplayName("the control, a naive consumer under the same crashes: 0 lost, but it doubles")
    void naiveConsumerDoubles() throws Exception {
        Run run = run(null, 7);
        print("naive (no dedup)", run);
        assertThat(run.drained()).isTrue();
        assertThat(run.lost()).isZero();
        assertThat(run.doubled()).as("at least every message published twice").isGreaterThanOrEqualTo(MESSAGES / 10);
    }

    private Run run(DedupStore store, long seed) throws Exception {
        Random random = new Random(seed);
        String topic = createTopic("chaos", PARTITIONS);
        String group = "chaos-" + unique();
        String table = "kafka_chaos_" + unique();
        int published = publish(topic, random);
        Figures figures = new Figures();
        try (Connection db = KafkaTestSupport.postgres(); Admin admin = KafkaTestSupport.admin()) {
            CrashableConsumer.createTables(db, table);
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
                    consumers.add(start(group, topic, store, table, selfHalts, figures, serial));
                }
                Map<TopicPartition, Long> end = endOffsets(admin, topic);
                int crashes = 0;
                long nextCrash = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
                boolean drained = false;
                while (!drained && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(RUN_LIMIT_MILLIS)) {
                    Thread.sleep(100);
                    if (System.currentTimeMillis() >= nextCrash) {
                        CrashableConsumer victim = consumers.remove(random.nextInt(consumers.size()));
                        victim.crash();
                        victim.join();
                        crashes++;
                        consumers.add(start(group, topic, store, table, selfHalts, figures, serial));
                        nextCrash = System.currentTimeMillis() + 1_000 + random.nextInt(1_000);
                    }
                    // A consumer that halted itself is replaced, like a restarted process.
                    for (int i = 0; i < consumers.size(); i++) {
                        if (!consumers.get(i).isAlive()) {
                            consumers.set(i, start(group, topic, store, table, selfHalts, figures, serial));
                        }
                    }
                    drained = committed(admin, group).equals(end);
                }
                for (CrashableConsumer consumer : consumers) {
                    consumer.stop();
                }
                for (CrashableConsumer consumer : consumers) {
                    consumer.join();
                }
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertThat(figures.errors).isEmpty();
                return figures(db, table, figures, published, crashes, millis, drained);
            } finally {
                CrashableConsumer.dropTables(db, table);
            }
        }
    }

    private static CrashableConsumer start(String group, String topic, DedupStore store, String table,
            CrashableConsumer.HaltPlan plan, Figures figures, int[] serial) {
        return new CrashableConsumer("consumer-" + ++serial[0], group, topic, 100, store, table, plan, figures)
                .effectPause(EFFECT_PAUSE_MILLIS)
                .start();
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

    private static Run figures(Connection db, String table, Figures figures, int published, int crashes,
            long millis, boolean drained) throws Exception {
        int applied = 0;
        int doubled = 0;
        int applications = 0;
        try (var statement = db.createStatement();
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
        return new Run(published, figures.deliveries.sum(), crashes, halts, figures.betweenEffectAndCompletion(),
                MESSAGES - applied, doubled, applications, outcomes, figures.deadLetters.sum(), millis, drained);
    }

    private static void print(String label, Run run) {
        System.out.printf("chaos %s: %d messages (%d records), %d handler runs, %d driver crashes, halts %s,"
                        + " %d crashes between effect and completion; lost %d, doubled %d, applications %d;"
                        + " outcomes %s; dead letters %d; %.1f s%n",
                label, MESSAGES, run.published(), run.deliveries(), run.crashes(), run.halts(),
                run.betweenEffectAndCompletion(), run.lost(), run.doubled(), run.applications(), run.outcomes(),
                run.deadLetters(), run.millis() / 1000.0);
    }
}
