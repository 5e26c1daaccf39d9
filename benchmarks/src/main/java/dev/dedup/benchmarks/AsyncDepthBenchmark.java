package dev.dedup.benchmarks;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.fixture.Durations;
import dev.dedup.benchmarks.fixture.RawBaseline;
import dev.dedup.benchmarks.fixture.StoreFixture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
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
import org.openjdk.jmh.annotations.Threads;

/**
 * One caller thread keeping {@link #depth} fresh claims in flight: the store's {@link AsyncDedupStore#claim} against
 * the driver's own asynchronous write-if-absent (Lettuce {@code SET NX PX}) on the same connection. Each invocation
 * waits for a free slot in the window, issues one call and returns; the reply frees the slot. Every reply is
 * checked: a fresh key that comes back as anything but a claim fails the iteration.
 *
 * <p>{@code bench.sh} runs it at depth 64 for the stores of {@link AsyncGroup}; run it by name for others (see
 * docs/benchmarks.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(1)
public class AsyncDepthBenchmark {

    @Param({"redis"})
    public String store;

    @Param({"64"})
    public int depth;

    private StoreFixture fixture;
    private String namespace;
    private DedupStore dedup;
    private AsyncDedupStore async;
    private RawBaseline raw;
    private Semaphore window;
    private final AtomicReference<Throwable> broken = new AtomicReference<>();
    private long next;

    @Setup(Level.Trial)
    public void open() {
        fixture = BenchStore.named(store).open(0);
        namespace = Trials.newNamespace();
        dedup = fixture.openStore(namespace);
        async = dedup.async();
        raw = fixture.openBaseline(namespace);
        window = new Semaphore(depth);
        System.out.println("\n[bench] store under test: " + fixture.description() + "; namespace " + namespace
                + "; " + depth + " calls in flight from one thread");
    }

    @TearDown(Level.Iteration)
    public void drain() throws InterruptedException {
        window.acquire(depth); // every call of the iteration has answered
        window.release(depth);
        Throwable failure = broken.get();
        if (failure != null) {
            throw new IllegalStateException("a call in the window failed", failure);
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

    /** The store: {@code store.async().claim(key, lease)}, a fresh key each call. */
    @Benchmark
    public void storeClaim() throws InterruptedException {
        issue(key -> async.claim(key, Durations.LEASE).thenApply(result -> result instanceof Claim));
    }

    /** The raw driver: an async {@code SET key owner NX PX lease} on the same connection, a fresh key each call. */
    @Benchmark
    public void rawSetNxPx() throws InterruptedException {
        issue(raw::insertIfAbsentAsync);
    }

    private void issue(Function<String, CompletionStage<Boolean>> call) throws InterruptedException {
        window.acquire();
        String key = "async-" + next++;
        call.apply(key).whenComplete((written, failure) -> {
            if (failure != null || !written) {
                broken.compareAndSet(null, failure != null ? failure
                        : new IllegalStateException("the fresh key '" + key + "' was not written"));
            }
            window.release();
        });
    }
}
