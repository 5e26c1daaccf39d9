package dev.dedup.spring.boot;

import java.util.Optional;

/**
 * An earlier call under the key failed with an exception listed in {@link Idempotent#keepKeyOn()}: the key is stored
 * as failed, so the method does not run again while the record lives.
 */
public final class IdempotentCallFailedException extends IdempotentCallException {
    private static final long serialVersionUID = 1L;

    /** The stored description of the first failure, or null. */
    private final String error;

    IdempotentCallFailedException(String key, Optional<String> error) {
        super(key, "an earlier call under key '" + key + "' failed and its failure was kept"
                + error.map(e -> ": " + e).orElse(""));
        this.error = error.orElse(null);
    }

    /** {@return the stored description of the first failure (its exception's class and message), if any} */
    public Optional<String> error() {
        return Optional.ofNullable(error);
    }
}
