package dev.dedup.kafka.spring;

import dev.dedup.DedupException;
import java.util.Objects;

/**
 * The handler or the store failed for a record with a failure that a retry may fix (a {@code Failed} outcome whose
 * key was not kept): the claim was released, and the record must come again. Retryable: the container's error
 * handler seeks back to the record and tries it again after its back-off. The failure is the {@link #getCause()
 * cause}.
 */
public class RecordFailedException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** The key whose claim was released. */
    private final String key;

    /**
     * A retryable failure of one record.
     *
     * @param where the record's {@code topic-partition@offset}
     * @param key the record's dedup key
     * @param cause what failed: the handler's exception or the store's
     */
    public RecordFailedException(String where, String key, Throwable cause) {
        super("record " + where + " (key " + key + ") failed and will be retried: " + cause, cause);
        this.key = Objects.requireNonNull(key, "key");
    }

    /**
     * The record's dedup key.
     *
     * @return the key whose claim was released for the retry
     */
    public String key() {
        return key;
    }
}
