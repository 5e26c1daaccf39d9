package dev.dedup.spring.boot;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The store's health: claims a probe key of its own for a few seconds and releases it, the round trip every
 * request makes. Down when the store throws, when a fresh key cannot be claimed, or when no answer comes within the
 * wait: a health check never blocks longer than that, whatever the store's client does.
 */
public class DedupStoreHealthIndicator extends AbstractHealthIndicator {
    private static final Duration PROBE_LEASE = Duration.ofSeconds(10);
    /** A thread per probe: checks are rare, and a probe that outlives its wait must not hold up the next one. */
    private static final Executor PROBES = probe -> {
        Thread thread = new Thread(probe, "dedup-health-probe");
        thread.setDaemon(true);
        thread.start();
    };

    private final DedupStore store;
    private final Duration wait;
    /** The last probe: one at a time, so a store that hangs gets no pile of probes on top of its callers. */
    private final AtomicReference<CompletableFuture<Boolean>> lastProbe =
            new AtomicReference<>(CompletableFuture.completedFuture(true));

    /**
     * Creates the indicator, waiting at most 5 s for the store.
     *
     * @param store the store to probe
     */
    public DedupStoreHealthIndicator(DedupStore store) {
        this(store, StoreTimeout.DEFAULT_HEALTH_WAIT);
    }

    /**
     * Creates the indicator.
     *
     * @param store the store to probe
     * @param wait the longest a check waits for the store's answer before reporting it down
     */
    public DedupStoreHealthIndicator(DedupStore store, Duration wait) {
        super("the dedup store health check failed");
        this.store = Objects.requireNonNull(store, "store");
        this.wait = Objects.requireNonNull(wait, "wait");
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws Exception {
        builder.withDetail("store", store.getClass().getSimpleName()).withDetail("namespace", store.namespace());
        CompletableFuture<Boolean> previous = lastProbe.get();
        if (!previous.isDone()) {
            builder.down().withDetail("probe", "the previous probe has had no answer yet");
            return;
        }
        CompletableFuture<Boolean> started = new CompletableFuture<>();
        CompletableFuture<Boolean> probe;
        if (lastProbe.compareAndSet(previous, started)) {
            PROBES.execute(() -> {
                try {
                    started.complete(freshKeyClaimed());
                } catch (Throwable e) {
                    started.completeExceptionally(e);
                }
            });
            probe = started;
        } else {
            probe = lastProbe.get();   // a concurrent check started one: wait for that one instead
        }
        try {
            if (probe.get(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                builder.up();
            } else {
                builder.down().withDetail("probe", "a fresh probe key was reported as a duplicate");
            }
        } catch (TimeoutException e) {
            builder.down().withDetail("probe", "no answer within " + wait);
        } catch (ExecutionException e) {
            // The store's own exception, reported as the check's error (its messages hold no credentials).
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    private boolean freshKeyClaimed() {
        ClaimResult probe = store.claim("dedup-health-probe:" + UUID.randomUUID(), PROBE_LEASE);
        if (probe instanceof Claim claim) {
            store.release(claim);
            return true;
        }
        return false;
    }
}
