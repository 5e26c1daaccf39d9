package dev.dedup.rabbitmq;

import dev.dedup.DedupException;

/**
 * A delivery without a {@code message-id} property, where the key is the message id: it cannot be deduplicated, so
 * {@link IdempotentDeliverCallback} dead-letters it without running the handler. Publish with
 * {@link ConfirmedPublisher}, which always sets one.
 */
public final class MissingMessageIdException extends DedupException {
    private static final long serialVersionUID = 1L;

    MissingMessageIdException(String message) {
        super(message);
    }
}
