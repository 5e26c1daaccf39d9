package dev.dedup.benchmarks;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.Durations;
import dev.dedup.benchmarks.fixture.StoreFixture;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The dedup stores through the {@link DedupStore} SPI, on their real servers. {@link BaselineBenchmark} runs the
 * same operations with the raw driver; the report divides the two. Every result is checked: a fresh key that comes
 * back as a duplicate (or the reverse) fails the run, since its number would be meaningless.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class StoreBenchmark {

    @Param({"memory", "postgres", "mariadb", "redis", "redis-metered", "redis-cluster", "mongo", "dynamodb"})
    public String store;

    /** Live rows already in the table (PostgreSQL only): how the cost grows with the table. */
    @Param({"0"})
    public int prefilledRows;

    private StoreFixture fixture;
    private String namespace;
    private DedupStore dedup;

    @Setup(Level.Trial)
    public void open() {
        fixture = BenchStore.named(store).open(prefilledRows);
        namespace = Trials.newNamespace();
        dedup = fixture.openStore(namespace);
        System.out.println("\n[bench] store under test: " + fixture.description() + "; namespace " + namespace);
        requireClaim(dedup.claim(Trials.DUPLICATE_KEY, Durations.DUPLICATE_LEASE), Trials.DUPLICATE_KEY);
        List<ClaimResult> batch = dedup.claimAll(Trials.DUPLICATE_BATCH, Durations.DUPLICATE_LEASE);
        for (int i = 0; i < batch.size(); i++) {
            requireClaim(batch.get(i), Trials.DUPLICATE_BATCH.get(i));
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        try {
            dedup.close();
            fixture.deleteNamespace(namespace);
        } finally {
            fixture.close();
        }
    }

    /** The hot path: a message seen for the first time. */
    @Benchmark
    public void claimFreshKey(FreshKeys keys, Blackhole blackhole) {
        String key = keys.next();
        blackhole.consume(requireClaim(dedup.claim(key, Durations.LEASE), key));
    }

    /** A redelivery while the record is live: the same key, again and again, from every thread. */
    @Benchmark
    public void claimLiveDuplicate(Blackhole blackhole) {
        ClaimResult result = dedup.claim(Trials.DUPLICATE_KEY, Durations.LEASE);
        if (!(result instanceof Duplicate)) {
            throw new IllegalStateException("the live key '" + Trials.DUPLICATE_KEY + "' was claimed again: " + result);
        }
        blackhole.consume(result);
    }

    /** A message processed once: claim, then complete. */
    @Benchmark
    public void claimAndComplete(FreshKeys keys, Blackhole blackhole) {
        String key = keys.next();
        Claim claim = requireClaim(dedup.claim(key, Durations.LEASE), key);
        if (!dedup.complete(claim, Durations.RETENTION, null)) {
            throw new IllegalStateException("completing the fresh claim of '" + key + "' failed");
        }
        blackhole.consume(claim);
    }

    @Benchmark
    @OperationsPerInvocation(10)
    public void claimAll10(FreshKeys keys, Blackhole blackhole) {
        claimAll(keys.next(10), blackhole);
    }

    @Benchmark
    @OperationsPerInvocation(100)
    public void claimAll100(FreshKeys keys, Blackhole blackhole) {
        claimAll(keys.next(100), blackhole);
    }

    /** A redelivered batch while its records are live: the same 100 keys, again and again, from every thread. */
    @Benchmark
    @OperationsPerInvocation(100)
    public void claimAll100Duplicates(Blackhole blackhole) {
        List<ClaimResult> results = dedup.claimAll(Trials.DUPLICATE_BATCH, Durations.LEASE);
        for (ClaimResult result : results) {
            if (!(result instanceof Duplicate)) {
                throw new IllegalStateException("a live key of the duplicate batch was claimed again: " + result);
            }
        }
        blackhole.consume(results);
    }

    private void claimAll(List<String> keys, Blackhole blackhole) {
        List<ClaimResult> results = dedup.claimAll(keys, Durations.LEASE);
        for (int i = 0; i < results.size(); i++) {
            requireClaim(results.get(i), keys.get(i));
        }
        blackhole.consume(results);
    }

    private static Claim requireClaim(ClaimResult result, String key) {
        if (result instanceof Claim claim) {
            return claim;
        }
        throw new IllegalStateException("the fresh key '" + key + "' came back as a duplicate: " + result);
    }
}
