package dev.dedup.benchmarks;

import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.KafkaFixture;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;

/**
 * Runs every benchmark group through JMH's Runner API and writes results.json (JMH's own format), results.md and
 * results.svg. Usually started by {@code scripts/bench.sh}, which starts the servers and builds this jar:
 *
 * <pre>
 * java -jar benchmarks/target/dedup-benchmarks.jar [--quick] [--out DIR] [--stores a,b] [--threads 1,4] [--plan]
 *     [--no-kafka | --kafka-only]
 * </pre>
 *
 * <p>After the store groups come, when PostgreSQL is among the stores, its runs beside Spring Integration's JDBC
 * metadata store ({@link PeerGroup}, one per thread count), then the async API's run ({@link AsyncGroup}) for the
 * stores among Redis and Redis Cluster, then the Kafka adapter's run ({@link KafkaGroup}), when Redis or PostgreSQL is among the
 * stores; it needs the harness's Kafka broker, and stops the runner at once, before any group, when none answers.
 * Last, when PostgreSQL is among the stores, the transactional outbox's run ({@link OutboxGroup}) on PostgreSQL and
 * the same broker; {@code --no-kafka} skips it too, {@code --kafka-only} keeps it.
 */
public final class BenchMain {
    private BenchMain() {}

    public static void main(String[] args) throws IOException {
        Arguments arguments;
        try {
            arguments = Arguments.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("[bench] " + e.getMessage() + "\n" + Arguments.USAGE);
            System.exit(2);
            return;
        }
        if (arguments.help()) {
            System.out.println(Arguments.USAGE);
            return;
        }
        List<BenchStore> used = arguments.kafka() == Kafka.ONLY
                ? KafkaGroup.STORES.stream().filter(arguments.stores()::contains).toList() : arguments.stores();
        for (BenchStore store : used) {
            if (!store.serverConfigured() && !arguments.planOnly()) {
                System.err.println("[bench] " + store.param() + " needs " + store.serverVariable() + ": run"
                        + " scripts/bench.sh, or eval \"$(bash scripts/test-servers.sh up)\" first");
                System.exit(2);
            }
        }
        if (arguments.kafkaGroup().isPresent() && !arguments.planOnly()) {
            Optional<String> unreachable = KafkaFixture.unreachable();
            if (unreachable.isPresent()) {
                System.err.println("[bench] the Kafka benchmark needs a broker at " + KafkaFixture.bootstrap() + " ("
                        + KafkaFixture.VARIABLE + ", default " + KafkaFixture.HARNESS_DEFAULT + "), but it did not"
                        + " answer: " + unreachable.get() + ". Run scripts/bench.sh, or eval \"$(bash"
                        + " scripts/test-servers.sh up)\" first; --no-kafka skips it");
                System.exit(2);
            }
        }
        System.exit(run(arguments));
    }

    private static int run(Arguments arguments) throws IOException {
        Profile profile = arguments.profile();
        List<JmhRun> groups = new ArrayList<>();
        if (arguments.kafka() != Kafka.ONLY) {
            groups.addAll(BenchGroup.plan(profile, arguments.stores()));
            groups.addAll(PeerGroup.plan(profile, arguments.stores()));
            AsyncGroup.plan(arguments.stores()).ifPresent(groups::add);
        }
        arguments.kafkaGroup().ifPresent(groups::add);
        arguments.outboxGroup().ifPresent(groups::add);
        int total = groups.stream().mapToInt(JmhRun::benchmarks).sum();
        long started = System.nanoTime();
        System.out.println("[bench] profile " + profile.describe());
        System.out.println("[bench] " + groups.size() + " groups, " + total + " benchmarks, about "
                + minutes(profile.estimate(total)) + "; results go to " + arguments.out());
        if (arguments.stores().contains(BenchStore.MONGO)) {
            System.out.println("[bench] note: mongo runs on " + BenchStore.MONGO.summary());
        }
        if (arguments.planOnly()) {
            for (int i = 0; i < groups.size(); i++) {
                System.out.printf("[bench] group %d/%d: %s%n", i + 1, groups.size(), groups.get(i).describe());
            }
            return 0;
        }

        List<RunResult> results = new ArrayList<>();
        String failure = null;
        int done = 0;
        for (int i = 0; i < groups.size(); i++) {
            JmhRun group = groups.get(i);
            Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
            System.out.printf("%n[bench] ==== group %d/%d: %s -- %d benchmark%s; elapsed %s, about %s left%n%n",
                    i + 1, groups.size(), group.describe(), group.benchmarks(), group.benchmarks() == 1 ? "" : "s",
                    minutes(elapsed), minutes(profile.estimate(total - done)));
            try {
                results.addAll(new Runner(group.options(profile)).run());
            } catch (RunnerException e) {
                failure = "group " + group.describe() + " failed: " + e.getMessage();
                System.err.println("[bench] " + failure);
                break;
            }
            done += group.benchmarks();
        }

        Duration took = Duration.ofNanos(System.nanoTime() - started);
        ResultsWriter.write(arguments.out(), results, profile, arguments.stores(), failure);
        System.out.printf("%n[bench] %s after %s: %s%n", failure == null ? "finished" : "STOPPED", minutes(took),
                arguments.out().resolve("results.md"));
        return failure == null ? 0 : 1;
    }

    private static String minutes(Duration duration) {
        long seconds = duration.toSeconds();
        return seconds < 60 ? seconds + "s" : seconds / 60 + "m" + String.format("%02d", seconds % 60) + "s";
    }

    /** Whether the Kafka adapter's run comes after the store groups, is skipped, or runs alone. */
    enum Kafka { INCLUDE, SKIP, ONLY }

    /** The command line. */
    record Arguments(Profile profile, Path out, List<BenchStore> stores, boolean planOnly, boolean help,
            Kafka kafka) {
        static final String USAGE = """
                usage: java -jar dedup-benchmarks.jar [options]
                  --quick                 the quick profile (smoke test); default is the full profile
                  --out DIR               where results.json, results.md and results.svg go
                                          (default benchmarks/results/<yyyyMMdd-HHmmss>[-quick])
                  --stores a,b            only these stores: memory, postgres, mariadb, redis, redis-metered,
                                          redis-cluster, mongo, dynamodb
                  --threads 1,4           only these thread counts
                  --plan                  print the groups and the time estimate, run nothing
                  --no-kafka              skip the Kafka adapter's run (it follows the store groups
                                          when postgres or redis is among the stores) and the outbox's
                  --kafka-only            only the Kafka adapter's run and the outbox's (with postgres)
                Server URLs come from the environment (DEDUP_TEST_POSTGRES_URL, DEDUP_TEST_MARIADB_URL,
                DEDUP_TEST_REDIS_URL, DEDUP_TEST_REDIS_CLUSTER_URL, DEDUP_TEST_KAFKA_BOOTSTRAP, default
                127.0.0.1:19092): scripts/bench.sh sets them from scripts/test-servers.sh.""";

        /** The Kafka adapter's run, unless skipped or no store it uses is selected. */
        Optional<KafkaGroup> kafkaGroup() {
            return kafka == Kafka.SKIP ? Optional.empty() : KafkaGroup.plan(stores);
        }

        /** The outbox's run (PostgreSQL and Kafka), unless Kafka is skipped or PostgreSQL is not selected. */
        Optional<OutboxGroup> outboxGroup() {
            return kafka == Kafka.SKIP || !stores.contains(BenchStore.POSTGRES) ? Optional.empty()
                    : Optional.of(new OutboxGroup());
        }

        static Arguments parse(String[] args) {
            Profile profile = Profile.FULL;
            Path out = null;
            List<BenchStore> stores = List.of(BenchStore.values());
            List<Integer> threads = null;
            boolean planOnly = false;
            boolean help = false;
            Kafka kafka = Kafka.INCLUDE;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--quick" -> profile = Profile.QUICK;
                    case "--profile" -> profile = Profile.named(value(args, ++i));
                    case "--out" -> out = Path.of(value(args, ++i));
                    case "--stores" -> stores = Arrays.stream(value(args, ++i).split(",")).map(String::trim)
                            .map(BenchStore::named).toList();
                    case "--threads" -> threads = Arrays.stream(value(args, ++i).split(",")).map(String::trim)
                            .map(Integer::valueOf).toList();
                    case "--plan" -> planOnly = true;
                    case "--no-kafka" -> kafka = Kafka.SKIP;
                    case "--kafka-only" -> kafka = Kafka.ONLY;
                    case "-h", "--help" -> help = true;
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (threads != null) {
                profile = profile.withThreads(threads);
            }
            if (out == null) {
                String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
                out = Path.of("benchmarks", "results", stamp + (profile == Profile.QUICK ? "-quick" : ""));
            }
            if (kafka == Kafka.ONLY && KafkaGroup.plan(stores).isEmpty()) {
                throw new IllegalArgumentException("--kafka-only needs redis or postgres among the stores");
            }
            return new Arguments(profile, out, stores, planOnly, help, kafka);
        }

        private static String value(String[] args, int index) {
            if (index >= args.length) {
                throw new IllegalArgumentException(args[index - 1] + " needs a value");
            }
            return args[index];
        }
    }
}
