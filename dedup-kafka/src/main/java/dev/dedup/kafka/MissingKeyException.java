package dev.dedup.kafka;

import dev.dedup.DedupException;

/**
 * A record carries no dedup key: the key header is absent or empty, or the business key function found none. Such a
 * record is never processed without a key: it goes to the dead letters ({@link DeadLetter.Reason#NO_KEY}), since
 * every delivery of it would fail the same way.
 */
public class MissingKeyException extends DedupException {
    private static final long serialVersionUID = 1L;

    /**
     * A record without a key.
     *
     * @param message what is missing and where, for example the header's name and the record's topic-partition@offset
     */
    public MissingKeyException(String message) {
        super(message);
    }
}
