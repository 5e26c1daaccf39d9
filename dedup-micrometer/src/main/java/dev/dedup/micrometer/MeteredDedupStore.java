package dev.dedup.micrometer;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link DedupStore} that records what every call did in a {@link MeterRegistry}, then answers exactly as the
 * store it wraps. Meters (all tagged {@code store} and {@code namespace}):
 * <ul>
 *   <li>{@code dedup.claims} (counter), tag {@code result}: {@code claimed}, {@code duplicate_in_progress},
 *       {@code duplicate_completed}, {@code duplicate_failed}; one per key, {@code claimAll} included.
 *   <li>{@code dedup.store.calls} (timer, with a percentile histogram), tags {@code operation} ({@code claim},
 *       {@code claim_all}, {@code complete}, {@code fail}, {@code release}, {@code extend}, {@code settle_all},
 *       {@code inspect}, {@code forget}) and {@code outcome}: {@code ok}, {@code not_owner} (the call returned
 *       false, or a batch settle false for any claim: the lease was lost), {@code absent} (inspect or forget found no live record), {@code error_retryable},
 *       {@code error_permanent}.
 * </ul>
 * Calls through {@link #async()} are recorded alike when their stage completes; a stage the caller cancelled is
 * timed with outcome {@code cancelled}.
 * Alert on {@code not_owner} for complete (a handler outlived its lease) and on the error outcomes.
 */
public final class MeteredDedupStore implements DedupStore {
    private final DedupStore store;
    private final MeterRegistry registry;
    private final String storeName;
    private final Tags tags;
    private final ObservationRegistry observations;
    /** Built once: a claim only increments, it never looks a meter up. */
    private final Map<String, Counter> claimCounters = new HashMap<>();
    /** One timer per (operation, outcome), registered on first use, then only looked up in this map. */
    private final ConcurrentMap<String, Timer> timers;
    private volatile AsyncDedupStore asyncView;

    private MeteredDedupStore(DedupStore store, MeterRegistry registry, String storeName,
            ObservationRegistry observations) {
        this.store = store;
        this.registry = registry;
        this.storeName = storeName;
        this.tags = Tags.of("store", storeName, "namespace", store.namespace());
        this.observations = observations;
        this.timers = new ConcurrentHashMap<>();
        claimCounters.put("claimed", claimCounter("claimed"));
        for (RecordState state : RecordState.values()) {
            String result = "duplicate_" + state.name().toLowerCase(Locale.ROOT);
            claimCounters.put(state.name(), claimCounter(result));
        }
    }

    /** {@code metered}'s meters over {@code view}: see {@link #forView}. */
    private MeteredDedupStore(MeteredDedupStore metered, DedupStore view) {
        this.store = view;
        this.registry = metered.registry;
        this.storeName = metered.storeName;
        this.tags = metered.tags;
        this.observations = metered.observations;
        this.claimCounters.putAll(metered.claimCounters);
        this.timers = metered.timers;
    }

    private Counter claimCounter(String result) {
        return Counter.builder("dedup.claims")
                .description("Claims by result: won, or a duplicate of a record in progress, completed or failed")
                .tags(tags).tag("result", result)
                .register(registry);
    }

    private Timer timer(String operation, String outcome) {
        return timers.computeIfAbsent(operation + '/' + outcome, id -> Timer.builder("dedup.store.calls")
                .description("Calls to the dedup store, by operation and outcome")
                .tags(tags).tag("operation", operation).tag("outcome", outcome)
                .publishPercentileHistogram()
                .register(registry));
    }

    /**
     * Wraps {@code store}, tagging its meters with {@code store} = the store's kind ({@code redis},
     * {@code postgres}, {@code dynamodb}, {@code mongo}, {@code inmemory}).
     *
     * @param store the store to measure; closing the wrapper closes it
     * @param registry where the meters go
     * @return a store that answers as {@code store} does and records each call
     */
    public static MeteredDedupStore wrap(DedupStore store, MeterRegistry registry) {
        Objects.requireNonNull(store, "store");
        return wrap(store, registry, kindOf(store));
    }

    /**
     * Wraps {@code store}, tagging its meters with {@code store} = {@code storeName}.
     *
     * @param store the store to measure; closing the wrapper closes it
     * @param registry where the meters go
     * @param storeName the value of the {@code store} tag, for example {@code orders-redis}
     * @return a store that answers as {@code store} does and records each call
     */
    public static MeteredDedupStore wrap(DedupStore store, MeterRegistry registry, String storeName) {
        return new MeteredDedupStore(Objects.requireNonNull(store, "store"),
                Objects.requireNonNull(registry, "registry"), Objects.requireNonNull(storeName, "storeName"),
                ObservationRegistry.NOOP);
    }

    /**
     * As {@link #wrap(DedupStore, MeterRegistry, String)}, and also wraps each call in an {@link Observation} named
     * {@code dedup.store.call} (low-cardinality keys {@code store}, {@code namespace}, {@code operation}), so a
     * tracing bridge on {@code observations} shows every store call as a span of the delivery that made it.
     *
     * @param store the store to measure; closing the wrapper closes it
     * @param registry where the meters go
     * @param storeName the value of the {@code store} tag
     * @param observations the application's observation registry
     * @return a store that answers as {@code store} does and records and observes each call
     */
    public static MeteredDedupStore wrap(DedupStore store, MeterRegistry registry, String storeName,
            ObservationRegistry observations) {
        return new MeteredDedupStore(Objects.requireNonNull(store, "store"),
                Objects.requireNonNull(registry, "registry"), Objects.requireNonNull(storeName, "storeName"),
                Objects.requireNonNull(observations, "observations"));
    }

    /**
     * As {@link #wrap(DedupStore, MeterRegistry)}, and also wraps each call in an {@link Observation}, as
     * {@link #wrap(DedupStore, MeterRegistry, String, ObservationRegistry)} does.
     *
     * @param store the store to measure; closing the wrapper closes it
     * @param registry where the meters go
     * @param observations the application's observation registry
     * @return a store that answers as {@code store} does and records and observes each call
     */
    public static MeteredDedupStore wrap(DedupStore store, MeterRegistry registry, ObservationRegistry observations) {
        Objects.requireNonNull(store, "store");
        return wrap(store, registry, kindOf(store), observations);
    }

    /** {@return the store this one measures} */
    public DedupStore delegate() {
        return store;
    }

    /**
     * These meters, with the same tags, over another view of the measured store, such as its view of one
     * transaction ({@code PostgresDedupStore.inTransaction(connection)}): the view's calls count with the store's.
     * Cheap: the meters are shared, not registered again.
     *
     * @param view a view of {@link #delegate()}, in the same namespace
     * @return a store that answers as {@code view} does and records each call in these meters
     * @throws IllegalArgumentException if {@code view} is in another namespace, whose calls these tags would misname
     */
    public MeteredDedupStore forView(DedupStore view) {
        Objects.requireNonNull(view, "view");
        if (!view.namespace().equals(store.namespace())) {
            throw new IllegalArgumentException("the view is in namespace '" + view.namespace()
                    + "', but these meters are tagged namespace '" + store.namespace() + "'");
        }
        return new MeteredDedupStore(this, view);
    }

    /**
     * The delegate's non-blocking view, metered and observed as the blocking calls are: the same meters and tags,
     * recorded when each stage completes. Cancelling a returned stage cancels the delegate's.
     *
     * @return the metered view; the same one on every call
     * @throws UnsupportedOperationException if the delegate has no non-blocking client, as its own
     *     {@code async()} does
     */
    @Override
    public AsyncDedupStore async() {
        AsyncDedupStore view = asyncView;
        if (view == null) {
            view = new MeteredAsyncDedupStore(store.async(), this);
            asyncView = view; // a race builds two equal views; either will do
        }
        return view;
    }

    /** {@code RedisDedupStore} → {@code redis}: the class name without its suffix, in lower case. */
    static String kindOf(DedupStore store) {
        String name = store.getClass().getSimpleName().replace("DedupStore", "");
        return name.isEmpty() ? "custom" : name.toLowerCase(Locale.ROOT);
    }

    @Override
    public String namespace() {
        return store.namespace();
    }

    @Override
    public ClaimResult claim(String key, Duration lease, byte[] fingerprint) {
        return timed("claim", () -> store.claim(key, lease, fingerprint), this::counted);
    }

    @Override
    public List<ClaimResult> claimAll(List<String> keys, Duration lease) {
        return timed("claim_all", () -> store.claimAll(keys, lease), this::countedAll);
    }

    @Override
    public boolean complete(Claim claim, Duration retention, byte[] result) {
        return timed("complete", () -> store.complete(claim, retention, result), MeteredDedupStore::owned);
    }

    @Override
    public boolean fail(Claim claim, Duration retention, byte[] error) {
        return timed("fail", () -> store.fail(claim, retention, error), MeteredDedupStore::owned);
    }

    @Override
    public boolean release(Claim claim) {
        return timed("release", () -> store.release(claim), MeteredDedupStore::owned);
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
        return timed("extend", () -> store.extend(claim, lease), MeteredDedupStore::owned);
    }

    @Override
    public List<Boolean> settleAll(List<Settlement> settlements) {
        return timed("settle_all", () -> store.settleAll(settlements), MeteredDedupStore::allOwned);
    }

    @Override
    public Optional<KeyRecord> inspect(String key) {
        return timed("inspect", () -> store.inspect(key), found -> found.isPresent() ? "ok" : "absent");
    }

    @Override
    public boolean forget(String key) {
        return timed("forget", () -> store.forget(key), removed -> removed ? "ok" : "absent");
    }

    @Override
    public void close() {
        store.close();
    }

    static String owned(Boolean done) {
        return done ? "ok" : "not_owner";
    }

    /** A batch settle is {@code not_owner} when any of its claims was no longer the caller's. */
    static String allOwned(List<Boolean> settled) {
        return settled.contains(Boolean.FALSE) ? "not_owner" : "ok";
    }

    private <T> T timed(String operation, Supplier<T> call, Function<T, String> outcomeOf) {
        if (observations.isNoop()) {
            return measured(operation, call, outcomeOf);
        }
        return observation(operation).observe(() -> measured(operation, call, outcomeOf));
    }

    private Observation observation(String operation) {
        return Observation.createNotStarted("dedup.store.call", observations)
                .lowCardinalityKeyValue("store", storeName)
                .lowCardinalityKeyValue("namespace", store.namespace())
                .lowCardinalityKeyValue("operation", operation);
    }

    private <T> T measured(String operation, Supplier<T> call, Function<T, String> outcomeOf) {
        long started = System.nanoTime();
        String outcome = "error_permanent";
        try {
            T result = call.get();
            outcome = outcomeOf.apply(result);
            return result;
        } catch (DedupStoreException e) {
            outcome = outcomeOf(e);
            throw e;
        } finally {
            timer(operation, outcome).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * The async twin of {@link #timed}: times and observes {@code call} until its stage completes. The returned
     * stage completes after the meters are recorded, and cancelling it cancels {@code call}'s stage, so the store
     * behind sees the caller's cancellation.
     */
    <T> CompletionStage<T> timedAsync(String operation, Supplier<CompletionStage<T>> call,
            Function<T, String> outcomeOf) {
        Observation observation = observation(operation).start();
        long started = System.nanoTime();
        CompletableFuture<T> inner;
        try (Observation.Scope scope = observation.openScope()) {
            inner = call.get().toCompletableFuture();
        } catch (RuntimeException e) {
            recordAsync(operation, started, observation, outcomeOf(e), e);
            throw e;
        }
        CompletableFuture<T> metered = new CompletableFuture<>();
        inner.whenComplete((value, failure) -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            recordAsync(operation, started, observation, cause == null ? outcomeOf.apply(value) : outcomeOf(cause),
                    cause);
            if (cause == null) {
                metered.complete(value);
            } else {
                metered.completeExceptionally(cause);
            }
        });
        metered.whenComplete((value, failure) -> {
            if (metered.isCancelled()) {
                inner.cancel(false);
            }
        });
        return metered;
    }

    private void recordAsync(String operation, long started, Observation observation, String outcome,
            Throwable failure) {
        timer(operation, outcome).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        if (failure != null) {
            observation.error(failure);
        }
        observation.stop();
    }

    private static String outcomeOf(Throwable failure) {
        if (failure instanceof CancellationException) {
            return "cancelled";
        }
        return failure instanceof DedupStoreException e && e.isRetryable() ? "error_retryable" : "error_permanent";
    }

    /** Counts a claim's result; its call's outcome is {@code ok}. */
    String counted(ClaimResult result) {
        claimCounters.get(result instanceof Duplicate duplicate ? duplicate.state().name() : "claimed").increment();
        return "ok";
    }

    /** Counts each result of a batch; its call's outcome is {@code ok}. */
    String countedAll(List<ClaimResult> results) {
        results.forEach(this::counted);
        return "ok";
    }
}
