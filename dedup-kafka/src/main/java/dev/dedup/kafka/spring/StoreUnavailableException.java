package dev.dedup.kafka.spring;

import dev.dedup.DedupException;
import java.util.Objects;

/**
 * The record's claim failed (the store could not be reached, or was closing), so the handler did not run: the
 * record is not at fault and must come again. Retryable without a limit: {@link DedupErrorHandler} retries it with a
 * back-off up to 10 s until the store answers, and never hands it to the recoverer, so an outage does not divert
 * records to the dead letters. The store's failure is the {@link #getCause() cause}.
 */
public class StoreUnavailableException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** The record's dedup key. */
    private final String key;

    /**
     * A record whose claim failed before its handler ran.
     *
     * @param where the record's {@code topic-partition@offset}
     * @param key the record's dedup key
     * @param cause the store's failure
     */
    public StoreUnavailableException(String where, String key, Throwable cause) {
        super("record " + where + " (key " + key + ") was not processed, the store failed before the handler ran;"
                + " it will be retried: " + cause, cause);
        this.key = Objects.requireNonNull(key, "key");
    }

    /**
     * The record's dedup key.
     *
     * @return the key whose claim failed
     */
    public String key() {
        return key;
    }
}
