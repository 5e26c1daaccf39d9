package dev.dedup.spring.boot;

import dev.dedup.DedupException;

/**
 * An {@link Idempotent} call that did not run the method and has no result to return; the subclass says why.
 */
public abstract class IdempotentCallException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** The stored key, with its scope. */
    private final String key;

    IdempotentCallException(String key, String message) {
        super(message);
        this.key = key;
    }

    /** {@return the stored key, with its scope} */
    public String key() {
        return key;
    }
}
