package dev.dedup.spring.boot;

/**
 * The key's call completed, but its result was not stored, so there is nothing to replay: it was larger than a
 * record holds (256 KiB), could not be encoded as JSON, or was of a subclass of the declared return type that would
 * not read back as itself. The method does not run again; returning null, or a default, would pass a wrong answer
 * off as the first call's. The first call's log says why its result was not stored.
 */
public final class IdempotentResultUnavailableException extends IdempotentCallException {
    private static final long serialVersionUID = 1L;

    IdempotentResultUnavailableException(String key) {
        super(key, "the call under key '" + key + "' completed, but its result was not stored (too large, not"
                + " encodable as JSON, or a subclass of the declared type), so it cannot be replayed");
    }
}
