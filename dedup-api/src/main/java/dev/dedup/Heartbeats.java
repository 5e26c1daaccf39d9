package dev.dedup;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps running handlers' claims alive. A timer only decides when to extend; each extend runs on an executor, so a
 * store call that hangs for one key never delays another key's extend. Each claim is extended every third of its
 * lease, and an extend that has not finished within a third of the lease is reported as a lease at risk: the next
 * tick still has a third of the lease to renew it.
 */
final class Heartbeats {
    private static final Logger log = LoggerFactory.getLogger(Heartbeats.class);

    private final DedupStore store;
    private final ScheduledExecutorService timer;
    private final Executor extender;

    Heartbeats(DedupStore store, ScheduledExecutorService timer, Executor extender) {
        this.store = store;
        this.timer = timer != null ? timer : Shared.TIMER;
        this.extender = extender != null ? extender : Shared.EXTENDER;
    }

    /**
     * No heartbeats, for claims made inside an open database transaction: nobody else can take them over before it
     * ends, and an extend from another thread on the transaction's connection could only abort it.
     */
    static Heartbeats none() {
        return new Heartbeats(null, null, null);
    }

    /**
     * Starts extending {@code claim} every third of {@code lease}. Throws
     * {@link java.util.concurrent.RejectedExecutionException} when the timer refuses the task.
     */
    Heartbeat start(Claim claim, Duration lease) {
        Heartbeat heartbeat = new Heartbeat(claim, lease);
        if (store == null) {
            return heartbeat;   // none(): never scheduled, never lost
        }
        long period = Math.max(1, lease.toMillis() / 3);
        heartbeat.future = timer.scheduleAtFixedRate(heartbeat::tick, period, period, TimeUnit.MILLISECONDS);
        return heartbeat;
    }

    /** The heartbeat of one claim. */
    final class Heartbeat {
        private final Claim claim;
        private final Duration lease;
        private final AtomicBoolean extending = new AtomicBoolean();
        private volatile boolean lost;
        private volatile boolean atRisk;
        private volatile ScheduledFuture<?> future;

        private Heartbeat(Claim claim, Duration lease) {
            this.claim = claim;
            this.lease = lease;
        }

        /** Stops extending; an extend in flight finishes on its own. */
        void stop() {
            ScheduledFuture<?> running = future;
            if (running != null) {
                running.cancel(false);
            }
        }

        /** True once an extend was late or failed: the lease may have lapsed while the handler ran. */
        boolean atRisk() {
            return atRisk;
        }

        /** True once the store said the claim is no longer ours. */
        boolean lost() {
            return lost;
        }

        private void tick() {
            if (lost) {
                return;
            }
            if (!extending.compareAndSet(false, true)) {
                // The previous extend is still stuck in the store; one call per claim at a time is enough.
                warnAtRisk("the previous extend has not returned");
                return;
            }
            long timeoutMillis = Math.max(1, lease.toMillis() / 3);
            CompletableFuture<Boolean> extend;
            try {
                extend = CompletableFuture.supplyAsync(this::extendOnce, extender);
            } catch (RejectedExecutionException e) {
                extending.set(false);
                warnAtRisk("the extend executor refused the extend");
                return;
            }
            extend
                    .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                    .whenComplete((extended, failure) -> {
                        if (failure instanceof TimeoutException) {
                            warnAtRisk("an extend did not finish within " + timeoutMillis + " ms");
                        } else if (failure != null) {
                            warnAtRisk("an extend failed: " + failure);
                        } else if (!extended) {
                            lost = true;
                            log.warn("lease on key {} was lost while its handler ran", claim.key());
                        }
                    });
        }

        private boolean extendOnce() {
            try {
                return StoreCalls.uninterrupted(() -> store.extend(claim, lease));
            } finally {
                extending.set(false);
            }
        }

        private void warnAtRisk(String why) {
            atRisk = true;
            log.warn("lease on key {} is at risk: {}; its handler may run twice if the lease lapses", claim.key(), why);
        }
    }

    /** Daemon threads shared by all consumers that do not bring their own. */
    private static final class Shared {
        static final ScheduledExecutorService TIMER = timer();
        static final ExecutorService EXTENDER = Executors.newCachedThreadPool(daemon("dedup-extend-"));

        private static ScheduledExecutorService timer() {
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, daemon("dedup-heartbeat-"));
            // Most handlers finish long before their first heartbeat: drop cancelled ones at once, not when due.
            executor.setRemoveOnCancelPolicy(true);
            return executor;
        }

        private static ThreadFactory daemon(String prefix) {
            AtomicInteger count = new AtomicInteger();
            return runnable -> {
                Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            };
        }
    }
}
