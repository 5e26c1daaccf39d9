package dev.dedup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Claim a key once, for a TTL: the store every application holds, and the whole SPI a backend implements. Backends
 * extend {@link dev.dedup.spi.AbstractDedupStore}, which checks every argument against {@link DedupLimits} before the
 * backend sees it.
 *
 * <p>The contract every store keeps (proved by {@code dev.dedup.tck.DedupStoreContractTest}):
 * <ol>
 *   <li>Exactly one caller wins a key while a live record exists, under any concurrency, across processes.
 *   <li>A record whose expiry has passed is claimable at once, whether or not the backend has deleted it yet.
 *   <li>A stale owner (lease lapsed) can neither complete, release nor extend.
 *   <li>Keys live in the store's {@link #namespace()}; the same key in two namespaces is two keys.
 *   <li>Expiry uses the server's clock where the backend has one, else the store's injectable {@code Clock}.
 *   <li>Bad input throws {@link IllegalArgumentException} and changes nothing stored.
 *   <li>Backend failures throw {@link DedupStoreException} with the cause attached.
 * </ol>
 */
public interface DedupStore extends AutoCloseable {

    /** The namespace every key of this store lives in. */
    String namespace();

    /** Claims {@code key} for {@code lease} unless a live record holds it; a duplicate is a value, not an error. */
    ClaimResult claim(String key, Duration lease);

    /**
     * Turns the caller's in-progress claim into a completed record kept for {@code retention}, with an optional
     * {@code result} (null for none) that duplicates get back. False if the claim is no longer the caller's.
     */
    boolean complete(Claim claim, Duration retention, byte[] result);

    /**
     * Turns the caller's in-progress claim into a failed record kept for {@code retention}, with an optional
     * {@code error} payload (null for none) that duplicates get back as a {@link Duplicate} in state
     * {@link RecordState#FAILED}: for failures that retrying cannot fix, such as a declined payment. False
     * if the claim is no longer the caller's.
     */
    boolean fail(Claim claim, Duration retention, byte[] error);

    /** Deletes the caller's in-progress claim so a redelivery can run at once. False if it is no longer the caller's. */
    boolean release(Claim claim);

    /** Renews the caller's in-progress claim to expire {@code lease} from now. False if it is no longer the caller's. */
    boolean extend(Claim claim, Duration lease);

    /**
     * Claims every key, returning one result per key in input order; a key given twice yields one {@link Claim} and
     * then a duplicate. Stores override this with one round trip where the backend allows.
     */
    default List<ClaimResult> claimAll(List<String> keys, Duration lease) {
        DedupLimits.checkKeys(keys);
        DedupLimits.checkDuration("lease", lease);
        List<ClaimResult> results = new ArrayList<>(keys.size());
        for (String key : keys) {
            results.add(claim(key, lease));
        }
        return results;
    }

    /** Releases the store's own resources; a client passed in by the application stays open. */
    @Override
    void close();
}
