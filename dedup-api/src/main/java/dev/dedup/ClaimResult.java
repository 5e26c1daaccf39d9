package dev.dedup;

import java.time.Instant;

/**
 * The outcome of a claim: either {@link Claim} (the caller won the key) or {@link Duplicate} (a live record exists).
 * A duplicate is a normal outcome, never an exception.
 */
public sealed interface ClaimResult permits Claim, Duplicate {

    /** {@return the key as the caller gave it, without namespace} */
    String key();

    /** {@return when the record (the new claim, or the existing one) expires, by the store's clock} */
    Instant expiresAt();

    /** {@return true for a {@link Claim}, false for a {@link Duplicate}} */
    default boolean isClaimed() {
        return this instanceof Claim;
    }
}
