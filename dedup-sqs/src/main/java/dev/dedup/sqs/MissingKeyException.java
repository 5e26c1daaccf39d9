package dev.dedup.sqs;

import dev.dedup.DedupException;

/**
 * A message carries no dedup key: the message attribute the key is read from is absent or empty, or the business key
 * function found none. Such a message is never processed without a key: it is a final failure, dead-lettered (by the
 * queue's redrive policy or to the dead-letter queue you configured), since every receive of it would fail the same
 * way.
 */
public final class MissingKeyException extends DedupException {
    private static final long serialVersionUID = 1L;

    MissingKeyException(String message) {
        super(message);
    }
}
