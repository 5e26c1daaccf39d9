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

/**
 * What {@link DedupStoreHealthIndicator} checks, on either Spring Boot line: claims a probe key of its own for a few
 * seconds and releases it, the round trip every request makes, and never waits longer than its wait, whatever the
 * store's client does.
 */
final class StoreProbe {
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

    StoreProbe(DedupStore store, Duration wait) {
        this.store = Objects.requireNonNull(store, "store");
        this.wait = Objects.requireNonNull(wait, "wait");
    }

    /**
     * Probes the store.
     *
     * @return null when a fresh key was claimed within the wait; else why the store is down
     * @throws Exception the store's own exception, reported as the check's error (its messages hold no credentials)
     */
    String whyDown() throws Exception {
        CompletableFuture<Boolean> previous = lastProbe.get();
        if (!previous.isDone()) {
            return "the previous probe has had no answer yet";
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
            return probe.get(wait.toMillis(), TimeUnit.MILLISECONDS) ? null
                    : "a fresh probe key was reported as a duplicate";
        } catch (TimeoutException e) {
            return "no answer within " + wait;
        } catch (ExecutionException e) {
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
