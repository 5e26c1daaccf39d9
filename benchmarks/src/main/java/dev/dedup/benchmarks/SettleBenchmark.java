package dev.dedup.benchmarks;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Settlement;
import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.Durations;
import dev.dedup.benchmarks.fixture.StoreFixture;
import java.util.ArrayList;
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
 * Settling a batch of 100 won claims: one {@code settleAll} against 100 single {@code complete} calls, on the same
 * store and server. Each invocation settles 100 fresh claims made (untimed) just before it by one {@code claimAll};
 * the score is settlements per second. Every answer is checked: a claim that does not settle fails the run. Not
 * in {@code bench.sh}'s groups; run it by name:
 *
 * <pre>
 * java -cp benchmarks/target/dedup-benchmarks.jar org.openjdk.jmh.Main SettleBenchmark -f 1 -wi 2 -w 2s -i 3 -r 2s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SettleBenchmark {
    static final int BATCH = 100;

    @Param({"postgres", "redis"})
    public String store;

    private StoreFixture fixture;
    private String namespace;
    private DedupStore dedup;

    @Setup(Level.Trial)
    public void open() {
        fixture = BenchStore.named(store).open(0);
        namespace = Trials.newNamespace();
        dedup = fixture.openStore(namespace);
        System.out.println("\n[bench] store under test: " + fixture.description() + "; namespace " + namespace);
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

    /** One thread's next batch: {@value #BATCH} fresh claims, won before each invocation, outside the timing. */
    @State(Scope.Thread)
    public static class Claims {
        List<Claim> won;

        @Setup(Level.Invocation)
        public void claim(SettleBenchmark bench, FreshKeys keys) {
            List<String> batch = keys.next(BATCH);
            List<ClaimResult> results = bench.dedup.claimAll(batch, Durations.LEASE);
            won = new ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                if (!(results.get(i) instanceof Claim claim)) {
                    throw new IllegalStateException("the fresh key '" + batch.get(i) + "' came back as a duplicate");
                }
                won.add(claim);
            }
        }
    }

    /** The batch: {@value #BATCH} completes in one {@code settleAll}. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void settleAll100(Claims claims, Blackhole blackhole) {
        List<Settlement> settlements = new ArrayList<>(BATCH);
        for (Claim claim : claims.won) {
            settlements.add(Settlement.complete(claim, Durations.RETENTION, null));
        }
        List<Boolean> answers = dedup.settleAll(settlements);
        if (answers.contains(false)) {
            throw new IllegalStateException("a fresh claim of the batch did not settle: " + answers);
        }
        blackhole.consume(answers);
    }

    /** The same {@value #BATCH} completes, one call each. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void complete100(Claims claims, Blackhole blackhole) {
        for (Claim claim : claims.won) {
            if (!dedup.complete(claim, Durations.RETENTION, null)) {
                throw new IllegalStateException("completing the fresh claim of '" + claim.key() + "' failed");
            }
        }
        blackhole.consume(claims.won);
    }
}
