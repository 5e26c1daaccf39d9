package dev.dedup;

import dev.dedup.spi.DedupStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wraps any consumer's handler so each message takes effect once, whatever the broker redelivers:
 *
 * <pre>{@code
 * var consumer = IdempotentConsumer.builder(store, (Order o) -> o.id(), ResultCodec.utf8())
 *         .lease(Duration.ofSeconds(30)).retention(Duration.ofDays(7)).build();
 * ProcessingOutcome<String> outcome = consumer.process(order, o -> billing.charge(o));
 * if (outcome.shouldAck()) ack(); else nack();
 * }</pre>
 *
 * <p>It claims the message's key, runs the handler, and completes the key with the encoded result. A duplicate of a
 * completed key returns the stored result without running the handler (replay for {@code Idempotency-Key}). A
 * handler failure releases the claim so the redelivery runs at once, unless {@link Builder#keepKeyOn} marks the
 * failure non-retryable. While the handler runs, the lease is extended every half lease. Thread-safe.
 */
public final class IdempotentConsumer<M, R> {
    private static final Logger log = LoggerFactory.getLogger(IdempotentConsumer.class);

    private final DedupStore store;
    private final Function<? super M, String> keyOf;
    private final ResultCodec<R> codec;
    private final Duration lease;
    private final Duration retention;
    private final Predicate<? super Exception> keepKeyOn;
    private final ScheduledExecutorService heartbeats;

    private IdempotentConsumer(Builder<M, R> builder) {
        this.store = builder.store;
        this.keyOf = builder.keyOf;
        this.codec = builder.codec;
        this.lease = builder.lease;
        this.retention = builder.retention;
        this.keepKeyOn = builder.keepKeyOn;
        this.heartbeats = builder.heartbeats != null ? builder.heartbeats : SharedScheduler.INSTANCE;
    }

    /**
     * Starts a consumer on {@code store} that finds each message's key with {@code keyOf} (a broker message id or a
     * business key, see the README) and stores handler results with {@code codec}.
     */
    public static <M, R> Builder<M, R> builder(DedupStore store, Function<? super M, String> keyOf,
            ResultCodec<R> codec) {
        return new Builder<>(store, keyOf, codec);
    }

    /** Processes one delivery of {@code message} with {@code handler}, at most once per key while the key lives. */
    public ProcessingOutcome<R> process(M message, MessageHandler<? super M, ? extends R> handler) {
        Objects.requireNonNull(handler, "handler");
        String key = DedupLimits.checkKey(keyOf.apply(message));
        ClaimResult claimed;
        try {
            claimed = store.claim(key, lease);
        } catch (DedupStoreException e) {
            return new ProcessingOutcome.Failed<>(key, e, false);
        }
        if (claimed instanceof Duplicate duplicate) {
            return duplicate.state() == RecordState.COMPLETED
                    ? new ProcessingOutcome.AlreadyProcessed<>(key, duplicate.result().map(codec::decode))
                    : new ProcessingOutcome.InProgressElsewhere<>(key, duplicate.expiresAt());
        }
        Claim claim = (Claim) claimed;
        R result;
        ScheduledFuture<?> heartbeat = startHeartbeat(claim);
        try {
            result = handler.handle(message);
        } catch (Exception e) {
            heartbeat.cancel(false);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return fail(claim, e);
        } catch (Error e) {
            heartbeat.cancel(false);
            releaseQuietly(claim, e);
            throw e;
        }
        heartbeat.cancel(false);
        return complete(claim, result);
    }

    private ProcessingOutcome<R> complete(Claim claim, R result) {
        byte[] encoded = codec.encode(result);
        if (encoded != null && encoded.length > DedupLimits.MAX_RESULT_BYTES) {
            // The effect happened: protect the key even though the result cannot be replayed.
            log.warn("result for key {} is {} bytes, over the {}-byte limit; completing without a stored result",
                    claim.key(), encoded.length, DedupLimits.MAX_RESULT_BYTES);
            encoded = null;
        }
        try {
            if (store.complete(claim, retention, encoded)) {
                return new ProcessingOutcome.Processed<>(claim.key(), result);
            }
            log.warn("lease on key {} lapsed before completion; another consumer may also have processed it",
                    claim.key());
            return new ProcessingOutcome.LeaseLost<>(claim.key(), result, Optional.empty());
        } catch (DedupStoreException e) {
            log.warn("could not record completion of key {}; a redelivery may process it again", claim.key(), e);
            return new ProcessingOutcome.LeaseLost<>(claim.key(), result, Optional.of(e));
        }
    }

    private ProcessingOutcome<R> fail(Claim claim, Exception failure) {
        if (keepKeyOn.test(failure)) {
            try {
                boolean kept = store.complete(claim, retention, null);
                return new ProcessingOutcome.Failed<>(claim.key(), failure, kept);
            } catch (DedupStoreException e) {
                failure.addSuppressed(e);
                return new ProcessingOutcome.Failed<>(claim.key(), failure, false);
            }
        }
        releaseQuietly(claim, failure);
        return new ProcessingOutcome.Failed<>(claim.key(), failure, false);
    }

    /** Releases so a redelivery can run at once; if the store fails, the lease lapses on its own. */
    private void releaseQuietly(Claim claim, Throwable failure) {
        try {
            store.release(claim);
        } catch (DedupStoreException e) {
            failure.addSuppressed(e);
        }
    }

    private ScheduledFuture<?> startHeartbeat(Claim claim) {
        long periodMillis = Math.max(1, lease.toMillis() / 2);
        AtomicBoolean lost = new AtomicBoolean();
        return heartbeats.scheduleAtFixedRate(() -> {
            if (lost.get()) {
                return;
            }
            try {
                if (!store.extend(claim, lease)) {
                    lost.set(true);
                    log.warn("lease on key {} was lost while its handler ran", claim.key());
                }
            } catch (RuntimeException e) {
                log.warn("could not extend the lease on key {}; will retry", claim.key(), e);
            }
        }, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** One daemon thread shared by all consumers: extends are short and rare (every half lease). */
    private static final class SharedScheduler {
        static final ScheduledExecutorService INSTANCE = create();

        private static ScheduledExecutorService create() {
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
                Thread thread = new Thread(runnable, "dedup-heartbeat");
                thread.setDaemon(true);
                return thread;
            });
            // Most handlers finish long before their first heartbeat: drop cancelled ones at once, not at their due time.
            executor.setRemoveOnCancelPolicy(true);
            return executor;
        }
    }

    /** Settings for an {@link IdempotentConsumer}; every setter checks its value at once. */
    public static final class Builder<M, R> {
        private final DedupStore store;
        private final Function<? super M, String> keyOf;
        private final ResultCodec<R> codec;
        private Duration lease = Duration.ofSeconds(30);
        private Duration retention = Duration.ofDays(1);
        private Predicate<? super Exception> keepKeyOn = failure -> false;
        private ScheduledExecutorService heartbeats;

        private Builder(DedupStore store, Function<? super M, String> keyOf, ResultCodec<R> codec) {
            this.store = Objects.requireNonNull(store, "store");
            this.keyOf = Objects.requireNonNull(keyOf, "keyOf");
            this.codec = Objects.requireNonNull(codec, "codec");
        }

        /** How long a claim holds before another consumer may take over (default 30 s); heartbeats renew it. */
        public Builder<M, R> lease(Duration lease) {
            this.lease = DedupLimits.checkDuration("lease", lease);
            return this;
        }

        /** How long a completed key is remembered (default 1 day): longer than the broker's redelivery window. */
        public Builder<M, R> retention(Duration retention) {
            this.retention = DedupLimits.checkDuration("retention", retention);
            return this;
        }

        /** Failures that retrying cannot fix: the key is completed, so redeliveries are not processed again. */
        public Builder<M, R> keepKeyOn(Predicate<? super Exception> nonRetryable) {
            this.keepKeyOn = Objects.requireNonNull(nonRetryable, "nonRetryable");
            return this;
        }

        /** The scheduler that runs lease heartbeats (default: one shared daemon thread). */
        public Builder<M, R> heartbeatScheduler(ScheduledExecutorService scheduler) {
            this.heartbeats = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        public IdempotentConsumer<M, R> build() {
            return new IdempotentConsumer<>(this);
        }
    }
}
