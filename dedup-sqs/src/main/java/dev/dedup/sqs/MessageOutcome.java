package dev.dedup.sqs;

import dev.dedup.ProcessingOutcome;
import java.util.Objects;
import java.util.Optional;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * What was done with one received message.
 *
 * @param <R> the handler's result type
 * @param message the message as received
 * @param outcome what the idempotent consumer reported for it; empty when it was not run because an earlier message
 *     of its FIFO message group must be processed first
 * @param disposition what that means for the message on the queue
 */
public record MessageOutcome<R>(Message message, Optional<ProcessingOutcome<R>> outcome, Disposition disposition) {

    /**
     * Checks that no part is null.
     *
     * @param message the message as received
     * @param outcome what the idempotent consumer reported for it, or empty
     * @param disposition what that means for the message on the queue
     */
    public MessageOutcome {
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(disposition, "disposition");
    }

    /** What an outcome means for the message on the queue. */
    public enum Disposition {
        /**
         * Took effect, here or before ({@code Processed}, {@code AlreadyProcessed}, {@code LeaseLost}): deleted, or
         * its delete failed and is sent again with the next poll (if it never gets through, the message comes back
         * and is deleted as {@code AlreadyProcessed}).
         */
        DONE,
        /** Can never take effect: sent to the configured dead-letter queue, then deleted. */
        DEAD_LETTERED,
        /**
         * Can never take effect, and no dead-letter queue is configured: left on the queue, visible again after the
         * first retry back-off, until the queue's redrive policy moves it to its dead-letter queue at its
         * {@code maxReceiveCount}.
         */
        REDRIVE,
        /**
         * Must come again: its handler failed and may succeed later, its key is held by another consumer, an earlier
         * message of its FIFO group must come first, or its dead letter could not be sent. Left on the queue,
         * visible again after the retry back-off (or when the other consumer's lease ends).
         */
        RETRY
    }
}
