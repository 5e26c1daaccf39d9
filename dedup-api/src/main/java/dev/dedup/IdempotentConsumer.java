package dev.dedup;

import dev.dedup.Heartbeats.Heartbeat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
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
 * failure non-retryable: the key is then stored as failed and redeliveries are {@link ProcessingOutcome.AlreadyFailed}.
 * While the handler runs, the lease is extended every third of the lease, off the caller's thread. With a
 * {@link Builder#fingerprint} function, each claim stores the message's payload fingerprint, and a duplicate whose
 * stored fingerprint differs is {@link ProcessingOutcome.KeyReused}: another message reused the key, so nothing is
 * replayed.
 *
 * <p>{@code process} never throws for a delivery: every failure, of the key function, the store, the codec or the
 * handler, ends in a {@link ProcessingOutcome} (only an {@link Error} from the handler is rethrown, after the claim
 * is released). Store calls run with the thread's interrupt flag cleared, so an interrupted consumer still releases
 * or completes its claim; the flag is restored afterwards. Thread-safe.
 *
 * @param <M> the message type
 * @param <R> the handler's result type; {@link Void} for handlers that return nothing
 */
public final class IdempotentConsumer<M, R> {
    private static final Logger log = LoggerFactory.getLogger(IdempotentConsumer.class);

    private final DedupStore store;
    private final Function<? super M, String> keyOf;
    private final Function<? super M, byte[]> fingerprintOf;
    private final ResultCodec<R> codec;
    private final Duration lease;
    private final Duration retention;
    private final Predicate<? super Exception> keepKeyOn;
    private final Function<? super Exception, String> describeFailure;
    private final Heartbeats heartbeats;
    private final Consumer<? super ProcessingOutcome<?>> outcomeListener;

    private IdempotentConsumer(Builder<M, R> builder) {
        this.store = builder.store;
        this.keyOf = builder.keyOf;
        this.fingerprintOf = builder.fingerprintOf;
        this.codec = builder.codec;
        this.lease = builder.lease;
        this.retention = builder.retention;
        this.keepKeyOn = builder.keepKeyOn;
        this.describeFailure = builder.describeFailure;
        this.heartbeats = new Heartbeats(store, builder.heartbeatTimer, builder.heartbeatExecutor);
        this.outcomeListener = builder.outcomeListener;
    }

    /** {@code settings} on {@code transactionView}, without heartbeats: see {@link #inTransaction}. */
    private IdempotentConsumer(IdempotentConsumer<M, R> settings, DedupStore transactionView) {
        this.store = transactionView;
        this.keyOf = settings.keyOf;
        this.fingerprintOf = settings.fingerprintOf;
        this.codec = settings.codec;
        this.lease = settings.lease;
        this.retention = settings.retention;
        this.keepKeyOn = settings.keepKeyOn;
        this.describeFailure = settings.describeFailure;
        this.heartbeats = Heartbeats.none();
        this.outcomeListener = settings.outcomeListener;
    }

    /**
     * This consumer's settings on a store's view of one open database transaction, such as {@code
     * PostgresDedupStore.inTransaction(connection)}: the transactional inbox, where the claims, the handler's writes
     * through the same connection and the completions commit or roll back together. No heartbeats run: inside the
     * transaction nobody else can take a claim over before it ends, and an extend sent from another thread on the
     * transaction's connection could only abort it. Cheap: make one per transaction.
     *
     * @param transactionView the store bound to the caller's open transaction; the caller commits or rolls back
     * @return a consumer for that transaction only
     */
    public IdempotentConsumer<M, R> inTransaction(DedupStore transactionView) {
        return new IdempotentConsumer<>(this, Objects.requireNonNull(transactionView, "transactionView"));
    }

    /**
     * Starts a consumer on {@code store} that finds each message's key with {@code keyOf} (a broker message id or a
     * business key, see the README) and stores handler results with {@code codec}.
     *
     * @param store the store that holds the keys; the consumer does not close it
     * @param keyOf finds a message's dedup key, at most {@link DedupLimits#MAX_KEY_BYTES} UTF-8 bytes (see
     *     {@link DedupKeys}); a null or invalid key, or an exception, makes that message
     *     {@link ProcessingOutcome.Failed}
     * @param codec turns handler results into stored bytes and back, for duplicates; {@link ResultCodec#none()} when
     *     results need not be replayed
     * @param <M> the message type
     * @param <R> the handler's result type
     * @return a builder with a 30 s lease and a 1 day retention
     */
    public static <M, R> Builder<M, R> builder(DedupStore store, Function<? super M, String> keyOf,
            ResultCodec<R> codec) {
        return new Builder<>(store, keyOf, codec);
    }

    /**
     * Processes one delivery of {@code message} with {@code handler}, at most once per key while the key lives.
     *
     * @param message the delivered message, passed to the key function and the handler
     * @param handler the business work, run only when this delivery wins the key
     * @return what happened, never null; {@link ProcessingOutcome#shouldAck()} says whether to ack
     */
    public ProcessingOutcome<R> process(M message, MessageHandler<? super M, ? extends R> handler) {
        Objects.requireNonNull(handler, "handler");
        return reported(decide(message, handler));
    }

    /** Hands an outcome to the {@link Builder#onOutcome} listener, and returns it. */
    private ProcessingOutcome<R> reported(ProcessingOutcome<R> outcome) {
        try {
            outcomeListener.accept(outcome);
        } catch (RuntimeException e) {
            // Metrics or logging must never change what happened to the delivery.
            log.warn("the outcome listener failed for key {}", outcome.key(), e);
        }
        return outcome;
    }

    private ProcessingOutcome<R> decide(M message, MessageHandler<? super M, ? extends R> handler) {
        String key;
        byte[] fingerprint;
        try {
            key = DedupLimits.checkKey(keyOf.apply(message));
            fingerprint = fingerprintOf(message);
        } catch (RuntimeException e) {
            return new ProcessingOutcome.Failed<>(null, e, false);
        }
        return claimAndRun(key, fingerprint, message, handler);
    }

    /** The message's checked fingerprint, or null when none is configured or the function returns none. */
    private byte[] fingerprintOf(M message) {
        return fingerprintOf == null ? null : DedupLimits.checkFingerprint(fingerprintOf.apply(message));
    }

    private ProcessingOutcome<R> claimAndRun(String key, byte[] fingerprint, M message,
            MessageHandler<? super M, ? extends R> handler) {
        Started started = start(key, fingerprint);
        return started.outcome != null ? started.outcome
                : runClaimed(started.claim, started.heartbeat, message, handler);
    }

    /** Claims the key and starts its heartbeat; or, when the handler must not run, the outcome that says why. */
    private Started start(String key, byte[] fingerprint) {
        ClaimResult claimed;
        try {
            claimed = StoreCalls.uninterrupted(() -> store.claim(key, lease, fingerprint));
        } catch (RuntimeException e) {
            return new Started(null, null, new ProcessingOutcome.Failed<>(key, e, false));
        }
        if (claimed instanceof Duplicate duplicate) {
            return new Started(null, null, duplicateOutcome(duplicate, fingerprint));
        }
        Claim claim = (Claim) claimed;
        try {
            return new Started(claim, heartbeats.start(claim, lease), null);
        } catch (RejectedExecutionException e) {
            // Without heartbeats the lease could lapse mid-handler: do not run it, and free the key at once.
            releaseQuietly(claim, e);
            return new Started(null, null, new ProcessingOutcome.Failed<>(key, e, false));
        }
    }

    /** A won claim with its running heartbeat, or the outcome of a delivery whose handler must not run. */
    private final class Started {
        private final Claim claim;
        private final Heartbeat heartbeat;
        private final ProcessingOutcome<R> outcome;

        private Started(Claim claim, Heartbeat heartbeat, ProcessingOutcome<R> outcome) {
            this.claim = claim;
            this.heartbeat = heartbeat;
            this.outcome = outcome;
        }
    }

    /**
     * Processes one delivery whose work finishes after the handler returns: an asynchronous HTTP response, a
     * transaction that commits later. The key is claimed and the handler called on the calling thread, as in
     * {@link #process}; the claim is then heartbeated until the handler's stage completes, and completed, failed or
     * released by how it completes, exactly as {@code process} does with a handler's return or exception.
     *
     * <p>A stage completed with a {@link CancellationException} means the caller stopped waiting while the work
     * may still run (a request that timed out): the heartbeats stop and the claim is neither completed nor
     * released, so the key stays held until its lease lapses, and the outcome is {@code Failed} with the key not
     * kept. Releasing it could let a retry run the work a second time beside the first.
     *
     * @param message the delivered message, passed to the key function and the handler
     * @param handler the business work, run only when this delivery wins the key; it returns the stage of its
     *     result (not null)
     * @return the outcome's stage: already complete unless the handler's stage is pending, and then completed on
     *     the thread that completes the handler's stage, after the claim was settled; it fails only with an
     *     {@link Error} of the handler
     */
    public CompletionStage<ProcessingOutcome<R>> processDeferred(M message,
            MessageHandler<? super M, ? extends CompletionStage<? extends R>> handler) {
        Objects.requireNonNull(handler, "handler");
        String key;
        byte[] fingerprint;
        try {
            key = DedupLimits.checkKey(keyOf.apply(message));
            fingerprint = fingerprintOf(message);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(reported(new ProcessingOutcome.Failed<>(null, e, false)));
        }
        Started started = start(key, fingerprint);
        if (started.outcome != null) {
            return CompletableFuture.completedFuture(reported(started.outcome));
        }
        CompletionStage<? extends R> work;
        try {
            work = Objects.requireNonNull(handler.handle(message), "the handler returned a null stage");
        } catch (Exception e) {
            started.heartbeat.stop();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return CompletableFuture.completedFuture(reported(fail(started.claim, e)));
        } catch (Error e) {
            started.heartbeat.stop();
            releaseQuietly(started.claim, e);
            throw e;
        }
        CompletableFuture<ProcessingOutcome<R>> outcome = new CompletableFuture<>();
        work.whenComplete((result, failure) -> {
            started.heartbeat.stop();
            try {
                outcome.complete(reported(settle(started, result, failure)));
            } catch (Error e) {
                outcome.completeExceptionally(e);
            }
        });
        return outcome;
    }

    /** Settles a deferred handler's claim by how its stage completed. */
    private ProcessingOutcome<R> settle(Started started, R result, Throwable failure) {
        if (failure == null) {
            return complete(started.claim, result, started.heartbeat);
        }
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof CancellationException) {
            log.warn("the work under key {} was abandoned while it may still run; the key stays held until its lease"
                    + " lapses", started.claim.key());
            return new ProcessingOutcome.Failed<>(started.claim.key(), cause, false);
        }
        if (cause instanceof Exception e) {
            return fail(started.claim, e);
        }
        releaseQuietly(started.claim, cause);
        if (cause instanceof Error error) {
            throw error;
        }
        return new ProcessingOutcome.Failed<>(started.claim.key(), cause, false);
    }

    /** Runs the handler under a won claim whose heartbeat runs, and completes, fails or releases the claim. */
    private ProcessingOutcome<R> runClaimed(Claim claim, Heartbeat heartbeat, M message,
            MessageHandler<? super M, ? extends R> handler) {
        R result;
        try {
            result = handler.handle(message);
        } catch (Exception e) {
            heartbeat.stop();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return fail(claim, e);
        } catch (Error e) {
            heartbeat.stop();
            releaseQuietly(claim, e);
            throw e;
        }
        heartbeat.stop();
        return complete(claim, result, heartbeat);
    }

    /**
     * Processes messages that must take effect in their order, such as the records of one Kafka partition: claims
     * all their keys with one {@link DedupStore#claimAll} call (not one claim per message), then runs the handler for
     * each claimed message in order and completes, fails or releases its key exactly as {@link #process} does.
     *
     * <p>The walk stops after the first message that must be delivered again: {@link
     * ProcessingOutcome.InProgressElsewhere}, or {@link ProcessingOutcome.Failed} with a key that was not kept. No
     * later message takes effect before it, and the claims won for the later messages are released so that their
     * redelivery can claim them at once. A message whose key cannot be found is {@code Failed} with a null key and
     * does not stop the walk: every delivery of it would fail the same way, so route it to a dead letter.
     *
     * <p>Every won claim is heartbeated from the batch claim on, so a message waiting for the ones before it keeps
     * its lease. A key that appears twice in the batch, or whose claim was lost while it waited, is claimed again on
     * its own when its turn comes. With a {@link Builder#fingerprint} function there is no batch claim (a batch
     * stores no fingerprints): each message is claimed on its own, with its fingerprint, when its turn comes. A
     * {@link ProcessingOutcome.KeyReused} message does not stop the walk: route it to a dead letter.
     *
     * @param messages the messages, in the order they must take effect
     * @param handler the business work for one message
     * @return one outcome per message walked, in order: as many as {@code messages}, or fewer when the walk stopped,
     *     and then the last outcome is the one that stopped it
     */
    public List<ProcessingOutcome<R>> processInOrder(List<? extends M> messages,
            MessageHandler<? super M, ? extends R> handler) {
        Objects.requireNonNull(messages, "messages");
        Objects.requireNonNull(handler, "handler");
        OrderedBatch batch = new OrderedBatch(messages);
        List<ProcessingOutcome<R>> outcomes = new ArrayList<>(messages.size());
        try {
            batch.claim();
            for (int i = 0; i < messages.size(); i++) {
                ProcessingOutcome<R> outcome = reported(batch.process(i, handler));
                outcomes.add(outcome);
                if (mustRedeliver(outcome)) {
                    break;
                }
            }
        } finally {
            batch.releaseUnused();
        }
        return outcomes;
    }

    /**
     * As {@link #processInOrder}, but every claim of the walk is settled together at its end: one {@link
     * DedupStore#claimAll}, the handlers in order, then one {@link DedupStore#settleAll} that completes, fails or
     * releases each claim as {@code processInOrder} would have one by one (and releases the claims of the messages
     * the walk did not reach). Two store round trips for a batch instead of one per message, for a wider window: a
     * crash after a message's effect and before the settle leaves its claim in progress, so the message runs again
     * once its lease lapses, as do the other messages of the batch that ran before the crash.
     *
     * <p>Every outcome rule of {@code processInOrder} holds: the walk stops at the first message that must come
     * again, and a message's outcome ({@code Processed}, {@code LeaseLost}, {@code Failed} with its key kept or not)
     * is what the settle answered for its claim. The claims of messages that ran are heartbeated until the settle, so
     * none lapses while later messages run. A key that appears again in the batch after a message that ran under it
     * has the settlements so far sent first (one more round trip), and then is claimed on its own; so does a kept
     * failure, which is final only once stored (if the store refuses it, the walk stops there). An {@link Error}
     * from the handler settles what ran, releases the rest, and is rethrown. The outcomes are handed to the
     * {@link Builder#onOutcome} listener after the settle.
     *
     * @param messages the messages, in the order they must take effect
     * @param handler the business work for one message
     * @return one outcome per message walked, in order, as {@link #processInOrder} returns them
     */
    public List<ProcessingOutcome<R>> processInOrderSettlingOnce(List<? extends M> messages,
            MessageHandler<? super M, ? extends R> handler) {
        Objects.requireNonNull(messages, "messages");
        Objects.requireNonNull(handler, "handler");
        OrderedBatch batch = new OrderedBatch(messages);
        SettledTogether settle = new SettledTogether(messages.size());
        try {
            batch.claim();
            for (int i = 0; i < messages.size(); i++) {
                if (batch.keys[i] != null && settle.ran(batch.keys[i])) {
                    settle.now(List.of());  // a repeat of a key that ran: its settlement first, then its own claim
                }
                Started started = batch.take(i);
                if (started.outcome != null) {
                    settle.decided(started.outcome);
                    if (mustRedeliver(started.outcome)) {
                        break;
                    }
                } else if (settle.run(started, messages.get(i), handler)) {
                    break;
                }
            }
        } catch (Error e) {
            // What ran before the Error took effect: settle and report it; the Error's own claim is released.
            settle.now(batch.takeUnused());
            settle.reported();
            throw e;
        }
        settle.now(batch.takeUnused());
        return settle.reported();
    }

    /** True for the outcomes that stop {@link #processInOrder}: the message must come again to take effect. */
    private static boolean mustRedeliver(ProcessingOutcome<?> outcome) {
        return outcome instanceof ProcessingOutcome.InProgressElsewhere
                || outcome instanceof ProcessingOutcome.Failed<?> failed && failed.key() != null && !failed.keyKept();
    }

    /** One {@link #processInOrder} call: the messages' keys, and the claims won for them and not yet used. */
    private final class OrderedBatch {
        private final List<? extends M> messages;
        private final String[] keys;
        private final byte[][] fingerprints;
        private final RuntimeException[] keyFailures;
        /** The first position of each distinct key, in order: only that position uses the batch's claim result. */
        private final Map<String, Integer> firstPosition = new LinkedHashMap<>();
        private final Map<String, ClaimResult> claimed = new HashMap<>();
        private final Map<String, Heartbeat> heartbeatOf = new HashMap<>();
        private RuntimeException claimFailure;

        OrderedBatch(List<? extends M> messages) {
            this.messages = messages;
            this.keys = new String[messages.size()];
            this.fingerprints = new byte[messages.size()][];
            this.keyFailures = new RuntimeException[messages.size()];
            for (int i = 0; i < keys.length; i++) {
                try {
                    String key = DedupLimits.checkKey(keyOf.apply(messages.get(i)));
                    fingerprints[i] = fingerprintOf(messages.get(i));
                    keys[i] = key;
                    firstPosition.putIfAbsent(key, i);
                } catch (RuntimeException e) {
                    keyFailures[i] = e;
                }
            }
        }

        /** One claimAll for every distinct key (split only past the store's batch limit), then the heartbeats. */
        void claim() {
            if (fingerprintOf != null) {
                return;     // each message is claimed with its fingerprint when its turn comes
            }
            List<String> distinct = new ArrayList<>(firstPosition.keySet());
            try {
                for (int from = 0; from < distinct.size(); from += DedupLimits.MAX_BATCH_KEYS) {
                    List<String> chunk = distinct.subList(from,
                            Math.min(distinct.size(), from + DedupLimits.MAX_BATCH_KEYS));
                    List<ClaimResult> results = StoreCalls.uninterrupted(() -> store.claimAll(chunk, lease));
                    for (ClaimResult result : results) {
                        claimed.put(result.key(), result);
                    }
                }
                for (ClaimResult result : claimed.values()) {
                    if (result instanceof Claim claim) {
                        heartbeatOf.put(claim.key(), heartbeats.start(claim, lease));
                    }
                }
            } catch (RuntimeException e) {
                // A failed claimAll or heartbeat: run nothing, free what was won, and let the first keyed message
                // report the failure (the walk stops there).
                claimFailure = e;
                releaseUnused();
            }
        }

        ProcessingOutcome<R> process(int i, MessageHandler<? super M, ? extends R> handler) {
            Started started = take(i);
            return started.outcome != null ? started.outcome
                    : runClaimed(started.claim, started.heartbeat, messages.get(i), handler);
        }

        /** The claim of message {@code i} with its heartbeat, or the outcome of a message whose handler must not run. */
        Started take(int i) {
            if (keyFailures[i] != null) {
                return new Started(null, null, new ProcessingOutcome.Failed<>(null, keyFailures[i], false));
            }
            String key = keys[i];
            if (claimFailure != null) {
                return new Started(null, null, new ProcessingOutcome.Failed<>(key, claimFailure, false));
            }
            if (fingerprintOf != null || firstPosition.get(key) != i) {
                return start(key, fingerprints[i]);
            }
            ClaimResult result = claimed.remove(key);
            if (result instanceof Duplicate duplicate) {
                return new Started(null, null, duplicateOutcome(duplicate, null));
            }
            Heartbeat heartbeat = heartbeatOf.remove(key);
            if (heartbeat.lost()) {
                // The store said the claim is no longer ours while the message waited: claim it afresh.
                heartbeat.stop();
                return start(key, null);
            }
            return new Started((Claim) result, heartbeat, null);
        }

        /**
         * Frees the claims won for messages the walk did not reach, so their redelivery runs at once. After the first
         * failed release the rest are left to lapse with their lease: a store that is down would fail (or time out)
         * once per claim.
         */
        void releaseUnused() {
            List<Claim> unused = takeUnused();
            for (int i = 0; i < unused.size(); i++) {
                Claim claim = unused.get(i);
                try {
                    StoreCalls.uninterrupted(() -> store.release(claim));
                } catch (RuntimeException e) {
                    log.warn("could not release {} unused claim(s), from key {} on; they lapse with their lease",
                            unused.size() - i, claim.key(), e);
                    return;
                }
            }
        }

        /** The claims won for messages the walk did not reach, their heartbeats stopped; the batch forgets them. */
        List<Claim> takeUnused() {
            List<Claim> unused = new ArrayList<>();
            for (ClaimResult result : claimed.values()) {
                if (result instanceof Claim claim) {
                    Heartbeat heartbeat = heartbeatOf.remove(claim.key());
                    if (heartbeat != null) {
                        heartbeat.stop();
                    }
                    unused.add(claim);
                }
            }
            claimed.clear();
            return unused;
        }
    }

    /**
     * The claims of one {@link #processInOrderSettlingOnce} walk whose handler ran, waiting for one settle, and the
     * walk's outcomes in order (a slot left empty until the settle decides it).
     */
    private final class SettledTogether {
        /** A handler that ran under a won claim; {@code position} is its outcome's slot, -1 after an Error. */
        private final class Ran {
            private final int position;
            private final Started started;
            private final Settlement settlement;
            private final R result;
            private final Exception failure;

            private Ran(int position, Started started, Settlement settlement, R result, Exception failure) {
                this.position = position;
                this.started = started;
                this.settlement = settlement;
                this.result = result;
                this.failure = failure;
            }
        }

        private final List<ProcessingOutcome<R>> outcomes;
        private final Map<String, Ran> waiting = new LinkedHashMap<>();

        SettledTogether(int size) {
            this.outcomes = new ArrayList<>(size);
        }

        boolean ran(String key) {
            return waiting.containsKey(key);
        }

        void decided(ProcessingOutcome<R> outcome) {
            outcomes.add(outcome);
        }

        /**
         * Runs the handler under a won claim, whose heartbeat goes on until the settle.
         *
         * @return true when the walk stops here: the handler failed and the failure is not kept (a kept failure is
         *     settled at once, one more round trip, so that a failure the store did not keep stops it too)
         */
        boolean run(Started started, M message, MessageHandler<? super M, ? extends R> handler) {
            Claim claim = started.claim;
            R result;
            try {
                result = handler.handle(message);
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                Settlement settlement = isNonRetryable(e)
                        ? Settlement.fail(claim, retention, describe(e)) : Settlement.release(claim);
                int position = outcomes.size();
                waiting.put(claim.key(), new Ran(position, started, settlement, null, e));
                outcomes.add(null);
                if (settlement.kind() == Settlement.Kind.RELEASE) {
                    return true;
                }
                // A kept failure is final only once stored: settle now, and stop here if it was not, as
                // processInOrder would, rather than run later messages past a message that must come again.
                now(List.of());
                return mustRedeliver(outcomes.get(position));
            } catch (Error e) {
                waiting.put(claim.key(), new Ran(-1, started, Settlement.release(claim), null, null));
                throw e;
            }
            Settlement settlement = Settlement.complete(claim, retention, encodeQuietly(claim.key(), result));
            waiting.put(claim.key(), new Ran(outcomes.size(), started, settlement, result, null));
            outcomes.add(null);
            return false;
        }

        /**
         * One settle (split only past the store's batch limit) for the claims that ran and the {@code unused} ones,
         * which are released; fills the outcomes of those that ran. A failed settle leaves every claim not settled
         * yet to lapse with its lease.
         */
        void now(List<Claim> unused) {
            if (waiting.isEmpty() && unused.isEmpty()) {
                return;
            }
            List<Settlement> settlements = new ArrayList<>(waiting.size() + unused.size());
            for (Ran ran : waiting.values()) {
                ran.started.heartbeat.stop();
                settlements.add(ran.settlement);
            }
            for (Claim claim : unused) {
                settlements.add(Settlement.release(claim));
            }
            List<Boolean> answers = new ArrayList<>(settlements.size());
            RuntimeException failure = null;
            try {
                for (int from = 0; from < settlements.size(); from += DedupLimits.MAX_BATCH_KEYS) {
                    List<Settlement> chunk = settlements.subList(from,
                            Math.min(settlements.size(), from + DedupLimits.MAX_BATCH_KEYS));
                    answers.addAll(StoreCalls.uninterrupted(() -> store.settleAll(chunk)));
                }
            } catch (RuntimeException e) {
                failure = e;
                if (!unused.isEmpty()) {
                    log.warn("could not release {} unused claim(s); they lapse with their lease",
                            settlements.size() - Math.max(answers.size(), waiting.size()), e);
                }
            }
            int i = 0;
            for (Ran ran : waiting.values()) {
                Boolean settled = i < answers.size() ? answers.get(i) : null;
                i++;
                if (ran.position >= 0) {
                    outcomes.set(ran.position, outcomeOf(ran, settled, failure));
                }
            }
            waiting.clear();
        }

        /** What the settle's answer for one claim means: null when the settle failed before answering for it. */
        private ProcessingOutcome<R> outcomeOf(Ran ran, Boolean settled, RuntimeException failure) {
            Claim claim = ran.started.claim;
            if (ran.settlement.kind() == Settlement.Kind.COMPLETE) {
                return completed(claim, ran.result, ran.started.heartbeat, Boolean.TRUE.equals(settled),
                        settled == null ? failure : null);
            }
            if (settled == null) {
                ran.failure.addSuppressed(failure);
            }
            boolean kept = ran.settlement.kind() == Settlement.Kind.FAIL && Boolean.TRUE.equals(settled);
            return new ProcessingOutcome.Failed<>(claim.key(), ran.failure, kept);
        }

        /** The outcomes, each handed to the listener, in order; an Error's message has none. */
        List<ProcessingOutcome<R>> reported() {
            List<ProcessingOutcome<R>> reported = new ArrayList<>(outcomes.size());
            for (ProcessingOutcome<R> outcome : outcomes) {
                reported.add(IdempotentConsumer.this.reported(outcome));
            }
            return reported;
        }
    }

    /**
     * What a duplicate means for this delivery: when both the record and the message carry a fingerprint and they
     * differ, another message reused the key, whatever the record's state; else a redelivery of the same message.
     */
    private ProcessingOutcome<R> duplicateOutcome(Duplicate duplicate, byte[] fingerprint) {
        if (fingerprint != null && duplicate.fingerprint().filter(stored -> !Arrays.equals(stored, fingerprint))
                .isPresent()) {
            log.warn("key {} was reused by a message with another payload fingerprint; not replaying",
                    duplicate.key());
            return new ProcessingOutcome.KeyReused<>(duplicate.key());
        }
        return switch (duplicate.state()) {
            case COMPLETED -> new ProcessingOutcome.AlreadyProcessed<>(duplicate.key(), decodeQuietly(duplicate));
            case FAILED -> new ProcessingOutcome.AlreadyFailed<>(duplicate.key(),
                    duplicate.result().map(bytes -> new String(bytes, StandardCharsets.UTF_8)));
            case IN_PROGRESS -> new ProcessingOutcome.InProgressElsewhere<>(duplicate.key(), duplicate.expiresAt());
        };
    }

    private ProcessingOutcome<R> complete(Claim claim, R result, Heartbeat heartbeat) {
        byte[] encoded = encodeQuietly(claim.key(), result);
        try {
            boolean stored = StoreCalls.uninterrupted(() -> store.complete(claim, retention, encoded));
            return completed(claim, result, heartbeat, stored, null);
        } catch (RuntimeException e) {
            return completed(claim, result, heartbeat, false, e);
        }
    }

    /** The outcome of a completion the store stored, refused (the claim is not ours any more) or failed to store. */
    private ProcessingOutcome<R> completed(Claim claim, R result, Heartbeat heartbeat, boolean stored,
            RuntimeException failure) {
        if (failure != null) {
            log.warn("could not record completion of key {}; a redelivery may process it again", claim.key(),
                    failure);
            return new ProcessingOutcome.LeaseLost<>(claim.key(), result, Optional.of(failure));
        }
        if (stored) {
            return new ProcessingOutcome.Processed<>(claim.key(), result);
        }
        log.warn("lease on key {} lapsed before completion{}; another consumer may also have processed it",
                claim.key(), heartbeat.atRisk() ? " (its heartbeat was late)" : "");
        return new ProcessingOutcome.LeaseLost<>(claim.key(), result, Optional.empty());
    }

    /**
     * The bytes to store for a result the handler produced. The effect has happened, so a result that cannot be
     * stored (the codec throws, or it is too large) still completes the key, without a result to replay.
     */
    private byte[] encodeQuietly(String key, R result) {
        byte[] encoded;
        try {
            encoded = codec.encode(result);
        } catch (RuntimeException e) {
            log.warn("could not encode the result for key {}; completing without a stored result", key, e);
            return null;
        }
        if (encoded != null && encoded.length > DedupLimits.MAX_RESULT_BYTES) {
            log.warn("result for key {} is {} bytes, over the {}-byte limit; completing without a stored result",
                    key, encoded.length, DedupLimits.MAX_RESULT_BYTES);
            return null;
        }
        return encoded;
    }

    /** A stored result that cannot be decoded is still a completed key: report it done, without the result. */
    private Optional<R> decodeQuietly(Duplicate duplicate) {
        Optional<byte[]> stored = duplicate.result();
        if (stored.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(codec.decode(stored.get()));
        } catch (RuntimeException e) {
            log.warn("could not decode the stored result for key {}; reporting it processed without a result",
                    duplicate.key(), e);
            return Optional.empty();
        }
    }

    private ProcessingOutcome<R> fail(Claim claim, Exception failure) {
        if (isNonRetryable(failure)) {
            try {
                byte[] error = describe(failure);
                boolean kept = StoreCalls.uninterrupted(() -> store.fail(claim, retention, error));
                return new ProcessingOutcome.Failed<>(claim.key(), failure, kept);
            } catch (RuntimeException e) {
                failure.addSuppressed(e);
                return new ProcessingOutcome.Failed<>(claim.key(), failure, false);
            }
        }
        releaseQuietly(claim, failure);
        return new ProcessingOutcome.Failed<>(claim.key(), failure, false);
    }

    private boolean isNonRetryable(Exception failure) {
        try {
            return keepKeyOn.test(failure);
        } catch (RuntimeException e) {
            // A broken predicate must not decide to keep a key: release, so the redelivery can run.
            failure.addSuppressed(e);
            return false;
        }
    }

    /** The stored description of a kept failure, cut to the result limit on a character boundary. */
    private byte[] describe(Exception failure) {
        String description;
        try {
            description = describeFailure.apply(failure);
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
            description = failure.getClass().getName();
        }
        if (description == null) {
            return null;
        }
        byte[] bytes = description.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= DedupLimits.MAX_RESULT_BYTES) {
            return bytes;
        }
        int end = Math.min(description.length(), DedupLimits.MAX_RESULT_BYTES / 4);
        if (Character.isHighSurrogate(description.charAt(end - 1))) {
            end--;
        }
        return description.substring(0, end).getBytes(StandardCharsets.UTF_8);
    }

    /** Releases so a redelivery can run at once; if the store fails, the lease lapses on its own. */
    private void releaseQuietly(Claim claim, Throwable failure) {
        try {
            StoreCalls.uninterrupted(() -> store.release(claim));
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    private static String defaultDescription(Exception failure) {
        return failure.getMessage() == null ? failure.getClass().getName()
                : failure.getClass().getName() + ": " + failure.getMessage();
    }

    /**
     * Settings for an {@link IdempotentConsumer}; every setter checks its value at once.
     *
     * @param <M> the message type
     * @param <R> the handler's result type
     */
    public static final class Builder<M, R> {
        private final DedupStore store;
        private final Function<? super M, String> keyOf;
        private final ResultCodec<R> codec;
        private Function<? super M, byte[]> fingerprintOf;
        private Duration lease = Duration.ofSeconds(30);
        private Duration retention = Duration.ofDays(1);
        private Predicate<? super Exception> keepKeyOn = failure -> false;
        private Function<? super Exception, String> describeFailure = IdempotentConsumer::defaultDescription;
        private ScheduledExecutorService heartbeatTimer;
        private Executor heartbeatExecutor;
        private Consumer<? super ProcessingOutcome<?>> outcomeListener = outcome -> {};

        private Builder(DedupStore store, Function<? super M, String> keyOf, ResultCodec<R> codec) {
            this.store = Objects.requireNonNull(store, "store");
            this.keyOf = Objects.requireNonNull(keyOf, "keyOf");
            this.codec = Objects.requireNonNull(codec, "codec");
        }

        /**
         * How long a claim holds before another consumer may take over (default 30 s); heartbeats renew it.
         *
         * @param lease 1 ms to 366 days; longer than a store call, so a heartbeat lands before it lapses
         * @return this builder
         */
        public Builder<M, R> lease(Duration lease) {
            this.lease = DedupLimits.checkDuration("lease", lease);
            return this;
        }

        /**
         * How long a completed key is remembered (default 1 day): longer than the broker's redelivery window.
         *
         * @param retention 1 ms to 366 days; also how long a kept failure is remembered
         * @return this builder
         */
        public Builder<M, R> retention(Duration retention) {
            this.retention = DedupLimits.checkDuration("retention", retention);
            return this;
        }

        /**
         * Stores a fingerprint of each message's payload with its claim (default: none), so a different message that
         * reuses a live key is told apart from a redelivery: when the duplicate's stored fingerprint and the
         * message's are both present and differ, the outcome is {@link ProcessingOutcome.KeyReused}, the handler
         * does not run and nothing is replayed. A record stored without a fingerprint (by a consumer without this
         * setting, or by a batch claim) matches any message. Use a digest of a canonical form of the payload, such
         * as {@code MessageDigest.getInstance("SHA-256").digest(body)}.
         *
         * @param fingerprint maps a message to 1 to {@link DedupLimits#MAX_FINGERPRINT_BYTES} bytes, or to null for
         *     none; if it throws or returns more, the delivery is {@link ProcessingOutcome.Failed} with a null key
         *     and the store is not called
         * @return this builder
         */
        public Builder<M, R> fingerprint(Function<? super M, byte[]> fingerprint) {
            this.fingerprintOf = Objects.requireNonNull(fingerprint, "fingerprint");
            return this;
        }

        /**
         * Failures that retrying cannot fix (a declined payment, an unknown SKU): the key is stored as failed, with
         * the failure's description, so redeliveries are {@link ProcessingOutcome.AlreadyFailed} and the handler does
         * not run again while the key lives.
         *
         * @param nonRetryable true for a handler's exception that retrying cannot fix (default: none); if it throws,
         *     the key is released as for a retryable failure
         * @return this builder
         */
        public Builder<M, R> keepKeyOn(Predicate<? super Exception> nonRetryable) {
            this.keepKeyOn = Objects.requireNonNull(nonRetryable, "nonRetryable");
            return this;
        }

        /**
         * What a kept failure stores for its redeliveries to report (default: the exception's class and message);
         * return a response body to replay a declined request as it was first answered, or null to store nothing.
         *
         * @param describe maps the handler's exception to the stored text, cut to {@link DedupLimits#MAX_RESULT_BYTES}
         *     in UTF-8; if it throws, the exception's class name is stored
         * @return this builder
         */
        public Builder<M, R> failureDescription(Function<? super Exception, String> describe) {
            this.describeFailure = Objects.requireNonNull(describe, "describe");
            return this;
        }

        /**
         * Called with every delivery's outcome, on the delivering thread, after the store calls: for metrics (see
         * dedup-micrometer) or logging. An exception it throws is logged and never changes the outcome.
         *
         * @param listener receives each outcome once, after {@code process} has finished with the store; it must be
         *     quick and thread-safe, since it runs on every consumer thread
         * @return this builder
         */
        public Builder<M, R> onOutcome(Consumer<? super ProcessingOutcome<?>> listener) {
            this.outcomeListener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * The timer that decides when to extend leases (default: one shared daemon thread); it never blocks.
         *
         * @param scheduler the timer; owned by the caller, who shuts it down after the consumer's last use. If it
         *     refuses a heartbeat when a handler is about to run, the claim is released and the delivery is
         *     {@link ProcessingOutcome.Failed}
         * @return this builder
         */
        public Builder<M, R> heartbeatScheduler(ScheduledExecutorService scheduler) {
            this.heartbeatTimer = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * Where the extends themselves run (default: a shared pool of daemon threads, at most one call in flight per
         * running handler), so a slow store call for one key never delays another key's extend.
         *
         * @param executor runs the store's extend calls; owned by the caller, who shuts it down after the consumer's
         *     last use. An extend it refuses is logged as a lease at risk and tried again at the next tick
         * @return this builder
         */
        public Builder<M, R> heartbeatExecutor(Executor executor) {
            this.heartbeatExecutor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** {@return a consumer with these settings; the builder may be reused for another} */
        public IdempotentConsumer<M, R> build() {
            return new IdempotentConsumer<>(this);
        }
    }
}
