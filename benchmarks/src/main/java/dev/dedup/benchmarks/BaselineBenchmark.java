package dev.dedup.benchmarks;

import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.RawBaseline;
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
 * The raw-driver baseline of each {@link StoreBenchmark} method: the same native operation, same client, same
 * server, no dedup code (see {@link RawBaseline}). Method names match, so the report can pair them.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BaselineBenchmark {

    @Param({"postgres", "mariadb", "redis", "redis-metered", "redis-cluster", "mongo", "dynamodb"})
    public String store;

    /** Live rows already in the table (PostgreSQL only). */
    @Param({"0"})
    public int prefilledRows;

    private StoreFixture fixture;
    private String namespace;
    private RawBaseline raw;

    @Setup(Level.Trial)
    public void open() {
        fixture = BenchStore.named(store).open(prefilledRows);
        namespace = Trials.newNamespace();
        raw = fixture.openBaseline(namespace);
        System.out.println("\n[bench] raw baseline on: " + fixture.description() + "; namespace " + namespace);
        Trials.requireFresh(raw.insertIfAbsent(Trials.DUPLICATE_KEY), Trials.DUPLICATE_KEY);
        if (raw.insertAllIfAbsent(Trials.DUPLICATE_BATCH) != Trials.DUPLICATE_BATCH.size()) {
            throw new IllegalStateException("the duplicate batch was not written whole in the set-up");
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        try {
            fixture.deleteNamespace(namespace);
        } finally {
            fixture.close();
        }
    }

    @Benchmark
    public void claimFreshKey(FreshKeys keys, Blackhole blackhole) {
        String key = keys.next();
        blackhole.consume(Trials.requireFresh(raw.insertIfAbsent(key), key));
    }

    @Benchmark
    public void claimLiveDuplicate(Blackhole blackhole) {
        blackhole.consume(Trials.requireDuplicate(!raw.insertIfAbsent(Trials.DUPLICATE_KEY)));
    }

    @Benchmark
    public void claimAndComplete(FreshKeys keys, Blackhole blackhole) {
        String key = keys.next();
        Trials.requireFresh(raw.insertIfAbsent(key), key);
        if (!raw.markCompleted(key)) {
            throw new IllegalStateException("marking '" + key + "' completed matched nothing");
        }
        blackhole.consume(key);
    }

    @Benchmark
    @OperationsPerInvocation(10)
    public void claimAll10(FreshKeys keys, Blackhole blackhole) {
        insertAll(keys.next(10), blackhole);
    }

    @Benchmark
    @OperationsPerInvocation(100)
    public void claimAll100(FreshKeys keys, Blackhole blackhole) {
        insertAll(keys.next(100), blackhole);
    }

    @Benchmark
    @OperationsPerInvocation(100)
    public void claimAll100Duplicates(Blackhole blackhole) {
        int written = raw.insertAllIfAbsent(Trials.DUPLICATE_BATCH);
        if (written != 0) {
            throw new IllegalStateException(written + " live keys of the duplicate batch were written again");
        }
        blackhole.consume(written);
    }

    private void insertAll(List<String> keys, Blackhole blackhole) {
        int written = raw.insertAllIfAbsent(keys);
        if (written != keys.size()) {
            throw new IllegalStateException("only " + written + " of " + keys.size() + " fresh keys were written");
        }
        blackhole.consume(written);
    }
}
