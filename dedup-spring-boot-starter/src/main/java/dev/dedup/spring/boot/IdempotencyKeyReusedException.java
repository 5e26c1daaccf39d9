package dev.dedup.spring.boot;

/**
 * The key belongs to another request: its record was stored with another {@link Idempotent#fingerprint()}, so the
 * stored result is not this call's to replay, and the method does not run.
 */
public final class IdempotencyKeyReusedException extends IdempotentCallException {
    private static final long serialVersionUID = 1L;

    IdempotencyKeyReusedException(String key) {
        super(key, "key '" + key + "' was used by a call with another fingerprint");
    }
}
