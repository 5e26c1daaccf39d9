package dev.dedup;

import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a store holds for one key right now, as {@link DedupStore#inspect(String)} reads it: for operators and
 * tools, not for the processing path (a claim already returns everything a consumer needs).
 *
 * <p>The byte arrays are copied in and out, so a record never changes after it is made.
 *
 * @param key the key as the caller gave it, without namespace
 * @param state the record's state
 * @param expiresAt when the record stops holding the key: the lease's end while {@link RecordState#IN_PROGRESS},
 *     the retention's end once completed or failed; by the store's clock (the server's, where the store uses it)
 * @param owner the owner token of the claim that wrote the record, or null where the store keeps none; it is what
 *     lets a {@link Claim} complete, so show it only to operators
 * @param fingerprint the fingerprint the record's claim stored, or null for none
 * @param result the result stored by {@code complete} or the error stored by {@code fail}, or null for none (always
 *     null while in progress)
 */
public record KeyRecord(String key, RecordState state, Instant expiresAt, String owner, byte[] fingerprint,
        byte[] result) {

    /**
     * Checks that key, state and expiry are present, and copies the byte arrays.
     *
     * @param key the key as the caller gave it, without namespace
     * @param state the record's state
     * @param expiresAt when the record stops holding the key, by the store's clock
     * @param owner the owner token of the claim that wrote the record, or null where the store keeps none
     * @param fingerprint the fingerprint the record's claim stored, or null for none; copied
     * @param result the stored result or error payload, or null for none; copied
     */
    public KeyRecord {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(expiresAt, "expiresAt");
        fingerprint = fingerprint == null ? null : fingerprint.clone();
        result = result == null ? null : result.clone();
    }

    /** {@return the fingerprint the record's claim stored, as a fresh copy, or null when it stored none} */
    @Override
    public byte[] fingerprint() {
        return fingerprint == null ? null : fingerprint.clone();
    }

    /** {@return the stored result or error payload, as a fresh copy, or null when there is none} */
    @Override
    public byte[] result() {
        return result == null ? null : result.clone();
    }

    /** {@return true when both records hold equal values, comparing the byte arrays by content} */
    @Override
    public boolean equals(Object other) {
        return other instanceof KeyRecord that
                && key.equals(that.key)
                && state == that.state
                && expiresAt.equals(that.expiresAt)
                && Objects.equals(owner, that.owner)
                && Arrays.equals(fingerprint, that.fingerprint)
                && Arrays.equals(result, that.result);
    }

    /** {@return a hash of the values, the byte arrays by content} */
    @Override
    public int hashCode() {
        return Objects.hash(key, state, expiresAt, owner, Arrays.hashCode(fingerprint), Arrays.hashCode(result));
    }

    /**
     * {@return the key, state and expiry, and the sizes of the byte arrays; never the owner token, which a log
     * should not hold}
     */
    @Override
    public String toString() {
        return "KeyRecord[key=" + key + ", state=" + state + ", expiresAt=" + expiresAt
                + ", owner=" + (owner == null ? "none" : "present")
                + ", fingerprint=" + (fingerprint == null ? "none" : fingerprint.length + " bytes")
                + ", result=" + (result == null ? "none" : result.length + " bytes") + "]";
    }
}
