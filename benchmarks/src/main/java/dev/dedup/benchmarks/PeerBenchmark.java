package dev.dedup.benchmarks;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.Durations;
import dev.dedup.benchmarks.fixture.RawBaseline;
import dev.dedup.benchmarks.fixture.SpringIntegrationPeer;
import dev.dedup.benchmarks.fixture.StoreFixture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The PostgreSQL store beside its nearest Java peer, Spring Integration's JDBC metadata store
 * ({@link SpringIntegrationPeer}), and the raw {@code INSERT ... ON CONFLICT DO NOTHING}, in one run on one pool: a
 * fresh key and a live duplicate each. Method names start with the side ({@code dedup}, {@code raw},
 * {@code springIntegration}) and end with the operation, so the report can line the three up. Every result is
 * checked, as in {@link StoreBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class PeerBenchmark {

    /** Live rows already in the store's and the baseline's tables (the peer's table starts empty). */
    @Param({"0"})
    public int prefilledRows;

    private StoreFixture fixture;
    private String namespace;
    private DedupStore dedup;
    private RawBaseline raw;
    private SpringIntegrationPeer peer;

    @Setup(Level.Trial)
    public void open() {
        fixture = BenchStore.POSTGRES.open(prefilledRows);
        namespace = Trials.newNamespace();
        dedup = fixture.openStore(namespace);
        raw = fixture.openBaseline(namespace);
        peer = SpringIntegrationPeer.open(fixture, namespace);
        System.out.println("\n[bench] dedup, raw and Spring Integration's JDBC metadata store on: "
                + fixture.description() + "; namespace " + namespace);
        if (!(dedup.claim(Trials.DUPLICATE_KEY, Durations.DUPLICATE_LEASE) instanceof Claim)
                || !raw.insertIfAbsent(Trials.DUPLICATE_KEY) || !peer.putIfAbsent(Trials.DUPLICATE_KEY)) {
            throw new IllegalStateException("the live duplicate was not written on every side in the set-up");
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        try {
            dedup.close();
            peer.deleteRegion();
            fixture.deleteNamespace(namespace);
        } finally {
            fixture.close();
        }
    }

    @Benchmark
    public void dedupClaimFreshKey(FreshKeys keys, Blackhole blackhole) {
        String key = keys.next();
        ClaimResult result = dedup.claim(key, Durations.LEASE);
        blackhole.consume(Trials.requireFresh(result instanceof Claim, key));
    }

    @Benchmark
    public void rawClaimFreshKey(FreshKeys keys, Blackhole blackhole) {
        String key = keys.next();
        blackhole.consume(Trials.requireFresh(raw.insertIfAbsent(key), key));
    }

    @Benchmark
    public void springIntegrationClaimFreshKey(FreshKeys keys, Blackhole blackhole) {
        String key = keys.next();
        blackhole.consume(Trials.requireFresh(peer.putIfAbsent(key), key));
    }

    @Benchmark
    public void dedupClaimLiveDuplicate(Blackhole blackhole) {
        ClaimResult result = dedup.claim(Trials.DUPLICATE_KEY, Durations.LEASE);
        blackhole.consume(Trials.requireDuplicate(result instanceof Duplicate));
    }

    @Benchmark
    public void rawClaimLiveDuplicate(Blackhole blackhole) {
        blackhole.consume(Trials.requireDuplicate(!raw.insertIfAbsent(Trials.DUPLICATE_KEY)));
    }

    @Benchmark
    public void springIntegrationClaimLiveDuplicate(Blackhole blackhole) {
        blackhole.consume(Trials.requireDuplicate(!peer.putIfAbsent(Trials.DUPLICATE_KEY)));
    }
}
