package dev.dedup;

import java.time.Instant;
import java.util.Optional;

/**
 * What {@link IdempotentConsumer#process} did with one delivery, so the caller can ack or nack. Use
 * {@link #shouldAck()} for the usual choice, or look at the variant for more.
 *
 * @param <R> the handler's result type
 */
public sealed interface ProcessingOutcome<R> {

    /** {@return the key the message was deduplicated under; null when no valid key could be found for it} */
    String key();

    /**
     * Tells the caller whether to ack the delivery.
     *
     * @return true when the broker may forget the message: it was processed here or before. False when it must come
     *     back later: still running elsewhere, or failed here (after a non-retryable failure whose key was kept, or
     *     for a {@link KeyReused} key, route it to a dead-letter queue instead)
     */
    boolean shouldAck();

    /**
     * The handler ran here and its completion was recorded.
     *
     * @param key the message's key
     * @param result what the handler returned, possibly null
     * @param <R> the handler's result type
     */
    record Processed<R>(String key, R result) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return true;
        }
    }

    /**
     * The key was completed before (a redelivery or a retried request): the handler did not run. {@code result} is
     * the stored result, empty when none was stored.
     *
     * @param key the message's key
     * @param result the result stored by the first processing, decoded; empty when none was stored
     * @param <R> the handler's result type
     */
    record AlreadyProcessed<R>(String key, Optional<R> result) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return true;
        }
    }

    /**
     * Another consumer holds the key and has not finished: the handler did not run. Redeliver after
     * {@code leaseExpiresAt} at the latest; if that consumer crashed, the key is free then.
     *
     * @param key the message's key
     * @param leaseExpiresAt when the other consumer's lease ends, by the store's clock, unless it extends it
     * @param <R> the handler's result type
     */
    record InProgressElsewhere<R>(String key, Instant leaseExpiresAt) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return false;
        }
    }

    /**
     * A delivery whose key was completed as failed before ({@link IdempotentConsumer.Builder#keepKeyOn} judged the failure
     * non-retryable): the handler did not run. {@code error} is the failure's description as stored (by default the
     * exception's class and message), so a retried request can be answered with the same failure. Ack it: a
     * redelivery cannot succeed, and the first delivery was reported as {@link Failed} with {@code keyKept}.
     *
     * @param key the message's key
     * @param error the stored description of the failure, decoded as UTF-8; empty when none was stored
     * @param <R> the handler's result type
     */
    record AlreadyFailed<R>(String key, Optional<String> error) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return true;
        }
    }

    /**
     * Another message already used this key: the live record's claim stored a payload fingerprint that differs from
     * this message's ({@link IdempotentConsumer.Builder#fingerprint}), whether that record is in progress, completed
     * or failed. The handler did not run, and this is never a replay: the stored result belongs to the other
     * message. A redelivery cannot succeed while the key lives, so do not ack and do not retry: route the message to
     * a dead-letter queue (the Kafka and RabbitMQ adapters do), or answer an HTTP request with {@code 422}.
     *
     * @param key the reused key
     * @param <R> the handler's result type
     */
    record KeyReused<R>(String key) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return false;
        }
    }

    /**
     * The handler or the store failed; nack, or dead-letter when {@code keyKept}. Before the handler ran: the key
     * function threw or returned an invalid key, or the fingerprint function threw or returned an invalid fingerprint
     * ({@code key} is then null), or the store failed or was closed at the
     * claim, or the heartbeat could not be scheduled (the claim was released). The handler threw: the claim was
     * released so a redelivery runs at once (or lapses with its lease if the store failed), unless the failure is
     * non-retryable ({@link IdempotentConsumer.Builder#keepKeyOn}), when {@code keyKept} is true and redeliveries are
     * {@link AlreadyFailed}. A deferred handler's stage was cancelled ({@link IdempotentConsumer#processDeferred}):
     * the work may still run, so the claim is left to lapse with its lease, neither released nor kept.
     *
     * @param key the message's key, or null when the key or the fingerprint function failed
     * @param cause what failed: the handler's exception, the store's, or the key function's
     * @param keyKept true when the key was completed as failed, so redeliveries are {@link AlreadyFailed}
     * @param <R> the handler's result type
     */
    record Failed<R>(String key, Throwable cause, boolean keyKept) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return false;
        }
    }

    /**
     * The handler ran here, but the completion could not be recorded: the lease lapsed (and another consumer may
     * have claimed the key and run the handler too), or the store failed (or was closed) while completing. The work
     * is done, so ack; alert on this outcome and lengthen the lease if it recurs. {@code storeFailure} is set when
     * the store failed.
     *
     * @param key the message's key
     * @param result what the handler returned, possibly null
     * @param storeFailure the store's exception when completing failed, empty when the lease had lapsed
     * @param <R> the handler's result type
     */
    record LeaseLost<R>(String key, R result, Optional<RuntimeException> storeFailure)
            implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return true;
        }
    }
}
