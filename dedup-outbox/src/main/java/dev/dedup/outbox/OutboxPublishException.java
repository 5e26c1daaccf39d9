package dev.dedup.outbox;

import dev.dedup.DedupException;
import java.util.Set;

/**
 * Thrown by an {@link OutboxPublisher} when the broker did not confirm every event of a batch. The relay marks the
 * {@link #confirmed()} events published and leaves the others for a later batch; whether the broker kept a copy of
 * an unconfirmed event is unknown, so it may be published twice, under the same {@code message-id}.
 */
public final class OutboxPublishException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** The message ids the broker confirmed. */
    private final Set<String> confirmed;

    /**
     * Creates the exception.
     *
     * @param message what failed; never a credential
     * @param confirmed the message ids of the batch's events the broker did confirm
     * @param cause the broker client's error, or null
     */
    public OutboxPublishException(String message, Set<String> confirmed, Throwable cause) {
        super(message, cause);
        this.confirmed = Set.copyOf(confirmed);
    }

    /** {@return the message ids of the batch's events the broker confirmed} */
    public Set<String> confirmed() {
        return confirmed;
    }
}
