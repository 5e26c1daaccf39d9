package dev.dedup.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.report.Operation;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The run plan: what each profile measures, without running it. */
class BenchGroupTest {

    @Test
    void fullProfilePlansEveryStoreOperationAndThreadCount() {
        List<BenchGroup> groups = BenchGroup.plan(Profile.FULL, List.of(BenchStore.values()));

        // 8 stores (redis-metered is one, mariadb another) x 3 thread counts x 6 operations.
        assertThat(groups).hasSize(144);
        // memory: store only; postgres: store + baseline at 2 table sizes; the others: store + baseline.
        assertThat(groups.stream().mapToInt(BenchGroup::benchmarks).sum())
                .isEqualTo(3 * (6 + 24 + 12 + 12 + 12 + 12 + 12 + 12));
        assertThat(groups.get(0).describe()).isEqualTo("memory / claim, fresh key / 1 thread (store only, the floor)");
    }

    @Test
    void eachGroupRunsOneOperationOfTheStoreAndItsBaseline() {
        BenchGroup group = new BenchGroup(BenchStore.POSTGRES, 4, Operation.CLAIM_ALL_100, List.of(0, 1_000_000));

        var options = group.options(Profile.QUICK);

        assertThat(options.getIncludes()).containsExactly(
                "^dev\\.dedup\\.benchmarks\\.StoreBenchmark\\.claimAll100$",
                "^dev\\.dedup\\.benchmarks\\.BaselineBenchmark\\.claimAll100$");
        assertThat(options.getParameter("store").get()).containsExactly("postgres");
        assertThat(options.getParameter("prefilledRows").get()).containsExactly("0", "1000000");
        assertThat(options.getThreads().get()).isEqualTo(4);
        assertThat(options.getForkCount().get()).isZero();
    }

    @Test
    void quickIsOneShortIterationPerBenchmarkOnOneThread() {
        assertThat(Profile.QUICK.threads()).containsExactly(1);
        assertThat(Profile.QUICK.warmupIterations()).isZero();
        assertThat(Profile.QUICK.measurementIterations()).isEqualTo(1);
        assertThat(BenchMain.Arguments.parse(new String[] {"--quick", "--stores", "redis", "--threads", "2"})
                .profile().threads()).containsExactly(2);
    }

    @Test
    void kafkaRunsTheNoDedupLoopThenEachSelectedStoresLoopsOnOneThread() {
        KafkaGroup all = KafkaGroup.plan(List.of(BenchStore.values())).orElseThrow();
        assertThat(all.loops()).containsExactly("no-dedup", "batch-redis", "adapter-redis", "per-record-redis",
                "batch-postgres", "inbox-postgres", "adapter-postgres", "per-record-postgres");
        assertThat(KafkaGroup.plan(List.of(BenchStore.POSTGRES)).orElseThrow().loops())
                .containsExactly("no-dedup", "batch-postgres", "inbox-postgres", "adapter-postgres",
                        "per-record-postgres");
        assertThat(KafkaGroup.plan(List.of(BenchStore.MEMORY, BenchStore.MONGO))).isEmpty();

        var options = all.options(Profile.QUICK);
        assertThat(options.getIncludes()).containsExactly("^dev\\.dedup\\.benchmarks\\.KafkaBenchmark\\.poll$");
        assertThat(options.getParameter("loop").get()).hasSize(8);
        assertThat(options.getThreads().get()).isEqualTo(1);
    }

    @Test
    void kafkaFollowsTheStoreGroupsUnlessSkippedAndCanRunAlone() {
        assertThat(BenchMain.Arguments.parse(new String[] {"--quick"}).kafkaGroup()).isPresent();
        assertThat(BenchMain.Arguments.parse(new String[] {"--quick", "--no-kafka"}).kafkaGroup()).isEmpty();
        assertThat(BenchMain.Arguments.parse(new String[] {"--stores", "memory"}).kafkaGroup()).isEmpty();
        assertThat(BenchMain.Arguments.parse(new String[] {"--kafka-only"}).kafka())
                .isEqualTo(BenchMain.Kafka.ONLY);
    }

    @Test
    void outboxRunsWithPostgresAndKafkaOnly() {
        assertThat(BenchMain.Arguments.parse(new String[] {"--quick"}).outboxGroup()).isPresent();
        assertThat(BenchMain.Arguments.parse(new String[] {"--kafka-only"}).outboxGroup()).isPresent();
        assertThat(BenchMain.Arguments.parse(new String[] {"--quick", "--no-kafka"}).outboxGroup()).isEmpty();
        assertThat(BenchMain.Arguments.parse(new String[] {"--stores", "redis"}).outboxGroup()).isEmpty();
        assertThat(new OutboxGroup().options(Profile.QUICK).getThreads().get()).isEqualTo(1);
    }

    @Test
    void outboxGroupCountsEveryOutboxBenchmark() {
        long declared = java.util.Arrays.stream(OutboxBenchmark.class.getDeclaredMethods())
                .filter(method -> method.isAnnotationPresent(org.openjdk.jmh.annotations.Benchmark.class)).count();
        assertThat(new OutboxGroup().benchmarks()).as("OutboxGroup.benchmarks()").isEqualTo((int) declared)
                .isEqualTo(7);
    }

    @Test
    void asyncRunsTheRedisStoresAtDepth64OnOneCallerThread() {
        AsyncGroup all = AsyncGroup.plan(List.of(BenchStore.values())).orElseThrow();
        assertThat(all.stores()).containsExactly(BenchStore.REDIS, BenchStore.REDIS_CLUSTER);
        assertThat(all.benchmarks()).isEqualTo(4);
        assertThat(AsyncGroup.plan(List.of(BenchStore.POSTGRES))).isEmpty();

        var options = all.options(Profile.QUICK);
        assertThat(options.getIncludes()).containsExactly("^dev\\.dedup\\.benchmarks\\.AsyncDepthBenchmark\\.");
        assertThat(options.getParameter("store").get()).containsExactly("redis", "redis-cluster");
        assertThat(options.getParameter("depth").get()).containsExactly("64");
        assertThat(options.getThreads().get()).isEqualTo(1);
    }

    @Test
    void thePeerRunsOncePerThreadCountWithPostgresOnly() {
        List<PeerGroup> full = PeerGroup.plan(Profile.FULL, List.of(BenchStore.values()));
        assertThat(full).extracting(PeerGroup::threads).containsExactly(1, 4, 16);
        assertThat(PeerGroup.plan(Profile.FULL, List.of(BenchStore.REDIS))).isEmpty();

        long declared = java.util.Arrays.stream(PeerBenchmark.class.getDeclaredMethods())
                .filter(method -> method.isAnnotationPresent(org.openjdk.jmh.annotations.Benchmark.class)).count();
        assertThat(full.get(0).benchmarks()).as("PeerGroup.benchmarks()").isEqualTo((int) declared).isEqualTo(6);
        var options = full.get(2).options(Profile.QUICK);
        assertThat(options.getIncludes()).containsExactly("^dev\\.dedup\\.benchmarks\\.PeerBenchmark\\.");
        assertThat(options.getThreads().get()).isEqualTo(16);
    }
}
