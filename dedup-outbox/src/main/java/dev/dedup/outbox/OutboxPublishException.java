package dev.dedup.outbox;

import dev.dedup.DedupException;
import java.util.Map;
import java.util.Set;

/**
 * Thrown by an {@link OutboxPublisher} when the broker did not confirm every event of a batch. The relay marks the
 * {@link #confirmed()} events published and leaves the others for a later batch; whether the broker kept a copy of
 * an unconfirmed event is unknown, so it may be published twice, under the same {@code message-id}.
 *
 * <p>Among the unconfirmed events, the {@link #rejected()} ones failed for a reason of their own, one that retrying
 * the same event will likely meet again (too large, a missing topic or exchange, unroutable, not authorised): the
 * relay counts an attempt for each and parks it after {@link OutboxRelay.Builder#maxAttempts its limit}. An event
 * that failed for a reason of the broker's (unreachable, a timeout) is in neither set: an outage counts no attempt.
 */
public final class OutboxPublishException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** The message ids the broker confirmed. */
    private final Set<String> confirmed;
    /** The message ids the broker refused for a reason of the event's own, each with why. */
    private final Map<String, String> rejected;

    /**
     * Creates the exception for a failure that is not any event's own fault (no event {@linkplain #rejected()
     * rejected}).
     *
     * @param message what failed; never a credential
     * @param confirmed the message ids of the batch's events the broker did confirm
     * @param cause the broker client's error, or null
     */
    public OutboxPublishException(String message, Set<String> confirmed, Throwable cause) {
        this(message, confirmed, Map.of(), cause);
    }

    /**
     * Creates the exception.
     *
     * @param message what failed; never a credential
     * @param confirmed the message ids of the batch's events the broker did confirm
     * @param rejected the message ids of events that failed for a reason of their own, each with a description of
     *     the reason (stored with the event: no payload, no credential)
     * @param cause the broker client's error, or null
     * @throws IllegalArgumentException when an event is both confirmed and rejected
     */
    public OutboxPublishException(String message, Set<String> confirmed, Map<String, String> rejected,
            Throwable cause) {
        super(message, cause);
        this.confirmed = Set.copyOf(confirmed);
        this.rejected = Map.copyOf(rejected);
        for (String id : this.rejected.keySet()) {
            if (this.confirmed.contains(id)) {
                throw new IllegalArgumentException("message-id " + id + " is both confirmed and rejected");
            }
        }
    }

    /** {@return the message ids of the batch's events the broker confirmed} */
    public Set<String> confirmed() {
        return confirmed;
    }

    /**
     * {@return the message ids of the batch's events that failed for a reason of their own, each with why; empty
     * when the failure was the broker's (an outage), or the publisher does not tell}
     */
    public Map<String, String> rejected() {
        return rejected;
    }
}
