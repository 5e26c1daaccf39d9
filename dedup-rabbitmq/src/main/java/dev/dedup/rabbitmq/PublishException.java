package dev.dedup.rabbitmq;

import dev.dedup.DedupException;

/**
 * A message that {@link ConfirmedPublisher} could not get the broker to take responsibility for. Whether the broker
 * kept a copy is unknown for {@link Reason#TIMED_OUT}, {@link Reason#CHANNEL_CLOSED} and {@link Reason#INTERRUPTED}:
 * publish again with the same {@code message-id}, and the consumer's deduplication absorbs a second copy.
 */
public final class PublishException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** Why the publish failed. */
    public enum Reason {
        /** The broker answered with a negative confirm (basic.nack): it did not store the message. */
        NACKED,
        /** The message reached an exchange that routed it to no queue; it was returned and not stored. */
        UNROUTABLE,
        /** No confirm arrived within the publisher's timeout. */
        TIMED_OUT,
        /** The channel or connection closed before the confirm arrived, or while publishing. */
        CHANNEL_CLOSED,
        /** The publishing thread was interrupted while it waited; its interrupt flag is set again. */
        INTERRUPTED
    }

    /** Why the publish failed. */
    private final Reason reason;
    /** The message id the message was published with. */
    private final String messageId;

    PublishException(Reason reason, String messageId, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
        this.messageId = messageId;
    }

    /**
     * Why the publish failed.
     *
     * @return the reason
     */
    public Reason reason() {
        return reason;
    }

    /**
     * The {@code message-id} the message was published with, to publish it again under the same id.
     *
     * @return the message id
     */
    public String messageId() {
        return messageId;
    }
}
