package dev.dedup;

import java.time.Instant;
import java.util.Optional;

/**
 * What {@link IdempotentConsumer#process} did with one delivery, so the caller can ack or nack. Use
 * {@link #shouldAck()} for the usual choice, or look at the variant for more.
 */
public sealed interface ProcessingOutcome<R> {

    /** The key the message was deduplicated under. */
    String key();

    /**
     * True when the broker may forget the message: it was processed here or before. False when it must come back
     * later: still running elsewhere, or failed here (after a non-retryable failure whose key was kept, route it to
     * a dead-letter queue instead).
     */
    boolean shouldAck();

    /** The handler ran here and its completion was recorded. */
    record Processed<R>(String key, R result) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return true;
        }
    }

    /**
     * The key was completed before (a redelivery or a retried request): the handler did not run. {@code result} is
     * the stored result, empty when none was stored.
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
     */
    record InProgressElsewhere<R>(String key, Instant leaseExpiresAt) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return false;
        }
    }

    /**
     * The handler or the store failed. {@code keyKept} is true when the key was completed on purpose because the
     * failure is non-retryable (redeliveries will be {@link AlreadyProcessed}); otherwise the claim was released,
     * or will lapse with its lease, and a redelivery runs the handler again.
     */
    record Failed<R>(String key, Throwable cause, boolean keyKept) implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return false;
        }
    }

    /**
     * The handler ran here, but the completion could not be recorded: the lease lapsed (and another consumer may
     * have claimed the key and run the handler too), or the store failed while completing. The work is done, so ack;
     * alert on this outcome and lengthen the lease if it recurs. {@code storeFailure} is set when the store failed.
     */
    record LeaseLost<R>(String key, R result, Optional<DedupStoreException> storeFailure)
            implements ProcessingOutcome<R> {
        @Override
        public boolean shouldAck() {
            return true;
        }
    }
}
