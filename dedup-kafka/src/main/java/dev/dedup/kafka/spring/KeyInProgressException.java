package dev.dedup.kafka.spring;

import dev.dedup.DedupException;
import java.time.Instant;
import java.util.Objects;

/**
 * Another consumer holds the record's key and has not finished ({@code InProgressElsewhere}): the handler did not
 * run, and the record must come again. Retryable: the container's error handler seeks back to the record, so the
 * offset is never committed past it, and tries it again after its back-off, until the holder completes the key (the
 * retry is then {@code AlreadyProcessed}) or its lease lapses (the retry then claims it).
 */
public class KeyInProgressException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** The key another consumer holds. */
    private final String key;
    /** When the holder's lease ends; not serialized. */
    private final transient Instant leaseExpiresAt;

    /**
     * A record whose key is held elsewhere.
     *
     * @param where the record's {@code topic-partition@offset}
     * @param key the record's dedup key
     * @param leaseExpiresAt when the holder's lease ends, by the store's clock, unless it extends it
     */
    public KeyInProgressException(String where, String key, Instant leaseExpiresAt) {
        super("record " + where + ": key " + key + " is in progress elsewhere (lease until " + leaseExpiresAt
                + "); it will be retried");
        this.key = Objects.requireNonNull(key, "key");
        this.leaseExpiresAt = Objects.requireNonNull(leaseExpiresAt, "leaseExpiresAt");
    }

    /**
     * The record's dedup key.
     *
     * @return the key another consumer holds
     */
    public String key() {
        return key;
    }

    /**
     * When the holder's lease ends, unless it extends it; null after deserialization.
     *
     * @return the end of the other consumer's lease, by the store's clock
     */
    public Instant leaseExpiresAt() {
        return leaseExpiresAt;
    }
}
