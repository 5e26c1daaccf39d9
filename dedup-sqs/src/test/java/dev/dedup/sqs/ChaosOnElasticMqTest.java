package dev.dedup.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.sqs.ChaosConsumerMain.Slot;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.TestServers;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * Chaos on ElasticMQ (an SQS-compatible server, not Amazon SQS, in this JVM) with real consumer processes
 * ({@link ChaosConsumerMain}): {@value #DEFAULT_MESSAGES} messages by default ({@code -Ddedup.sqs.chaos.messages=N} for
 * the longer documented runs), each keyed by its {@code event-id} attribute, 10% of them sent a second time (a new
 * {@code MessageId}: a producer's retry); three consumers on one standard queue; the driver SIGKILLs a random consumer
 * every 0.5-1 s (after freezing it to read where it stood) and starts a new one. A dead consumer's messages come back
 * when their visibility timeout (the 2 s lease) lapses. Every effect is a row in PostgreSQL.
 *
 * <p>Asserted: nothing lost and nothing dead-lettered in every run; with the PostgreSQL transactional inbox nothing
 * doubled; with {@link SqsMessageProcessor} on the PostgreSQL store at most one double per death between effect and
 * completion; the naive consumer, the control, doubles. Each run's figures are printed and appended to
 * {@code target/sqs-chaos.txt}.
 */
@Timeout(300)
class ChaosOnElasticMqTest {
    private static final int DEFAULT_MESSAGES = 200;
    private static final int MESSAGES = Integer.getInteger("dedup.sqs.chaos.messages", DEFAULT_MESSAGES);
    private static final int CONSUMERS = 3;
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final long RUN_LIMIT_MILLIS = 240_000;
    /** Each message's work before its effect: the runs last long enough for kills in the middle of batches. */
    private static final long WORK_MILLIS = 15;

    record Run(String kind, int messages, int sent, long received, int kills, Map<Long, Integer> killsByPhase,
            Map<Slot, Long> counters, long lost, long doubled, int deadLettered, long millis, boolean drained) {
        long betweenEffectAndCompletion() {
            return killsByPhase.getOrDefault(ChaosConsumerMain.EFFECT_TO_COMPLETION, 0)
                    + counters.getOrDefault(Slot.LEASE_LOST, 0L);
        }

        @Override
        public String toString() {
            return String.format("chaos %s: %d messages (%d sends), %d received, %d SIGKILLs (by phase %s; %d between"
                            + " effect and completion); lost %d, doubled %d, dead-lettered %d; processed %d, already processed"
                            + " %d, in progress elsewhere %d, failed %d, lease lost %d; %.1f s",
                    kind, messages, sent, received, kills, phases(), betweenEffectAndCompletion(), lost, doubled, deadLettered,
                    counters.getOrDefault(Slot.PROCESSED, 0L), counters.getOrDefault(Slot.ALREADY_PROCESSED, 0L),
                    counters.getOrDefault(Slot.IN_PROGRESS_ELSEWHERE, 0L), counters.getOrDefault(Slot.FAILED, 0L),
                    counters.getOrDefault(Slot.LEASE_LOST, 0L), millis / 1000.0);
        }

        private Map<String, Integer> phases() {
            String[] names = {"idle", "handling", "effect-to-completion", "starting"};
            Map<String, Integer> phases = new java.util.LinkedHashMap<>();
            for (int phase = 0; phase < names.length; phase++) {
                phases.put(names[phase], killsByPhase.getOrDefault((long) phase, 0));
            }
            return phases;
        }
    }

    @Test
    @DisplayName("SqsMessageProcessor on PostgreSQL under SIGKILLs: 0 lost, doubled <= deaths between effect and completion")
    void processorUnderKills() throws Exception {
        Run run = run("PROCESSOR", 3);
        assertNothingLost(run);
        assertThat(run.doubled()).isLessThanOrEqualTo(run.betweenEffectAndCompletion());
    }

    @Test
    @DisplayName("the PostgreSQL transactional inbox under SIGKILLs: 0 lost, 0 doubled")
    void inboxUnderKills() throws Exception {
        Run run = run("INBOX", 5);
        assertNothingLost(run);
        assertThat(run.doubled()).isZero();
    }

    @Test
    @DisplayName("the control, a naive consumer under the same kills: 0 lost, but it doubles")
    void naiveConsumerDoubles() throws Exception {
        Run run = run("NAIVE", 7);
        assertNothingLost(run);
        assertThat(run.doubled()).as("at least every message sent twice").isGreaterThanOrEqualTo(MESSAGES / 10);
    }

    private static void assertNothingLost(Run run) {
        assertThat(run.drained()).as("the queue empty within the run's limit").isTrue();
        assertThat(run.lost()).isZero();
        assertThat(run.deadLettered()).isZero();
        assertThat(run.kills()).isPositive();
    }

    private Run run(String kind, long seed) throws Exception {
        Random random = new Random(seed);
        String run = "sqs_chaos_" + Long.toHexString(System.nanoTime());
        Path dir = Files.createTempDirectory("sqs-chaos-");
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null));
        try (SqsFixture fixture = SqsFixture.standard(100);
                Connection db = dataSource.getConnection();
                Statement statement = db.createStatement()) {
            statement.execute("CREATE TABLE " + run + "_effects (key text NOT NULL, consumer text NOT NULL)");
            PostgresDedupStore.builder(dataSource).table(run + "_claims").namespace("sqs").createSchema(true).build()
                    .close();  // the claims table, which the consumers attach to
            int sent = send(fixture, random);
            List<String> arguments = List.of("kind=" + kind, "queue=" + fixture.queue, "run=" + run,
                    "leaseMillis=" + LEASE.toMillis(), "workMillis=" + WORK_MILLIS);
            List<ConsumerProcess> all = new ArrayList<>();
            List<ConsumerProcess> live = new ArrayList<>();
            Map<Long, Integer> killsByPhase = new HashMap<>();
            int kills = 0;
            long started = System.nanoTime();
            boolean drained = false;
            try {
                for (int i = 0; i < CONSUMERS; i++) {
                    live.add(start(all, dir, arguments));
                }
                long nextKill = System.currentTimeMillis() + 500 + random.nextInt(500);
                long quietSince = System.nanoTime();
                while (!drained && System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(RUN_LIMIT_MILLIS)) {
                    Thread.sleep(100);
                    assertThat(sum(all, Slot.ERRORS)).as("consumer errors; %s",
                            ConsumerProcess.firstError(dir.resolve("consumers.log"))).isZero();
                    if (System.currentTimeMillis() >= nextKill) {
                        ConsumerProcess victim = live.remove(random.nextInt(live.size()));
                        killsByPhase.merge(victim.kill(), 1, Integer::sum);
                        kills++;
                        live.add(start(all, dir, arguments));
                        nextKill = System.currentTimeMillis() + 500 + random.nextInt(500);
                    }
                    if (fixture.onQueue() > 0) {
                        quietSince = System.nanoTime();
                    } else if (System.nanoTime() - quietSince > TimeUnit.MILLISECONDS.toNanos(500)) {
                        drained = true;
                    }
                }
            } finally {
                for (ConsumerProcess consumer : all) {
                    if (consumer.isAlive()) {
                        consumer.kill();
                    }
                }
            }
            Map<Slot, Long> counters = new HashMap<>();
            for (Slot slot : Slot.values()) {
                counters.put(slot, sum(all, slot));
            }
            long[] lostAndDoubled = lostAndDoubled(statement, run);
            Run figures = new Run(kind, MESSAGES, sent, counters.get(Slot.RECEIVED), kills, killsByPhase, counters,
                    lostAndDoubled[0], lostAndDoubled[1], fixture.deadLetters(Duration.ZERO).size(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), drained);
            record(figures);
            statement.execute("DROP TABLE " + run + "_effects");
            statement.execute("DROP TABLE " + run + "_claims");
            return figures;
        }
    }

    private static ConsumerProcess start(List<ConsumerProcess> all, Path dir, List<String> arguments) {
        ConsumerProcess consumer = ConsumerProcess.start("consumer-" + (all.size() + 1), ChaosConsumerMain.class,
                dir.resolve("consumer-" + (all.size() + 1) + ".board"), Slot.COUNT, dir.resolve("consumers.log"),
                arguments);
        all.add(consumer);
        return consumer;
    }

    private static long sum(List<ConsumerProcess> consumers, Slot slot) {
        long sum = 0;
        for (ConsumerProcess consumer : consumers) {
            sum += consumer.board().get(slot.ordinal());
        }
        return sum;
    }

    /** Every key once, 10% of them again later, in batches of 10; returns the number of sends. */
    private static int send(SqsFixture fixture, Random random) {
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            numbers.add(i);
        }
        Collections.shuffle(numbers, random);
        List<Integer> sends = new ArrayList<>(numbers);
        for (int number : numbers.subList(0, MESSAGES / 10)) {
            int first = sends.indexOf(number);
            sends.add(first + 1 + random.nextInt(sends.size() - first), number);
        }
        for (int from = 0; from < sends.size(); from += 10) {
            List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
            for (int i = from; i < Math.min(sends.size(), from + 10); i++) {
                entries.add(SendMessageBatchRequestEntry.builder().id(Integer.toString(i))
                        .messageBody("reserve " + sends.get(i))
                        .messageAttributes(Map.of(SqsFixture.KEY_ATTRIBUTE, MessageAttributeValue.builder()
                                .dataType("String").stringValue("reserve-" + sends.get(i)).build()))
                        .build());
            }
            fixture.sqs.sendMessageBatch(b -> b.queueUrl(fixture.queue).entries(entries));
        }
        return sends.size();
    }

    /** The keys never applied, and the applications beyond the first of each key. */
    private static long[] lostAndDoubled(Statement statement, String run) throws SQLException {
        try (ResultSet rows = statement.executeQuery("SELECT count(DISTINCT key), count(*) FROM " + run
                + "_effects")) {
            rows.next();
            return new long[] {MESSAGES - rows.getLong(1), rows.getLong(2) - rows.getLong(1)};
        }
    }

    private static void record(Run run) throws IOException {
        String line = run.toString();
        System.out.println("[sqs chaos] " + line);
        Files.writeString(Path.of("target", "sqs-chaos.txt"), line + System.lineSeparator(),
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
