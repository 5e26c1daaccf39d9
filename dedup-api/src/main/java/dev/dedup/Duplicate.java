package dev.dedup;

import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * A lost claim: a live record already holds the key. Its {@link #state()} tells whether the work is still running
 * elsewhere ({@link RecordState#IN_PROGRESS}) or done ({@link RecordState#COMPLETED}, with the stored result if any),
 * and {@link #fingerprint()} the payload fingerprint its claim stored, if any.
 */
public final class Duplicate implements ClaimResult {
    private final String key;
    private final RecordState state;
    private final Instant expiresAt;
    private final byte[] result;
    private final byte[] fingerprint;

    /**
     * Creates the outcome a store returns when a live record without a fingerprint holds the key.
     *
     * @param key the key as the caller gave it, without namespace
     * @param state the live record's state
     * @param expiresAt when the live record expires, by the store's clock
     * @param result the stored result or error payload, or null for none; copied
     */
    public Duplicate(String key, RecordState state, Instant expiresAt, byte[] result) {
        this(key, state, expiresAt, result, null);
    }

    /**
     * Creates the outcome a store returns when a live record holds the key.
     *
     * @param key the key as the caller gave it, without namespace
     * @param state the live record's state
     * @param expiresAt when the live record expires, by the store's clock
     * @param result the stored result or error payload, or null for none; copied
     * @param fingerprint the fingerprint stored with the record's claim, or null for none; copied
     */
    public Duplicate(String key, RecordState state, Instant expiresAt, byte[] result, byte[] fingerprint) {
        this.key = Objects.requireNonNull(key, "key");
        this.state = Objects.requireNonNull(state, "state");
        this.expiresAt = Objects.requireNonNull(expiresAt, "expiresAt");
        this.result = result == null ? null : result.clone();
        this.fingerprint = fingerprint == null ? null : fingerprint.clone();
    }

    @Override
    public String key() {
        return key;
    }

    /** {@return whether the work is still running elsewhere, completed or failed for good} */
    public RecordState state() {
        return state;
    }

    @Override
    public Instant expiresAt() {
        return expiresAt;
    }

    /**
     * {@return the result stored by {@code complete}, or the error payload stored by {@code fail}, as a fresh copy;
     * empty while in progress or when none was stored}
     */
    public Optional<byte[]> result() {
        return Optional.ofNullable(result).map(byte[]::clone);
    }

    /**
     * {@return the fingerprint the record's claim stored
     * ({@link DedupStore#claim(String, java.time.Duration, byte[])}), as a fresh copy, whatever the record's state;
     * empty when the claim stored none}
     */
    public Optional<byte[]> fingerprint() {
        return Optional.ofNullable(fingerprint).map(byte[]::clone);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Duplicate that
                && key.equals(that.key)
                && state == that.state
                && expiresAt.equals(that.expiresAt)
                && Arrays.equals(result, that.result)
                && Arrays.equals(fingerprint, that.fingerprint);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, state, expiresAt, Arrays.hashCode(result), Arrays.hashCode(fingerprint));
    }

    @Override
    public String toString() {
        return "Duplicate[key=" + key + ", state=" + state + ", expiresAt=" + expiresAt
                + ", result=" + (result == null ? "none" : result.length + " bytes")
                + ", fingerprint=" + (fingerprint == null ? "none" : fingerprint.length + " bytes") + "]";
    }
}
