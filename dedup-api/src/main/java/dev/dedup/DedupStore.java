package dev.dedup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

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

    /** {@return the namespace every key of this store lives in, matching {@link DedupLimits#NAMESPACE_PATTERN}} */
    String namespace();

    /**
     * Claims {@code key} for {@code lease} unless a live record holds it; a duplicate is a value, not an error.
     *
     * @param key the message's dedup key, without namespace: 1 to {@link DedupLimits#MAX_KEY_BYTES} UTF-8 bytes, no
     *     NUL
     * @param lease how long the claim holds unless completed, released or extended: 1 ms to 366 days
     * @return a {@link Claim} when the caller won the key, else a {@link Duplicate} describing the live record
     * @throws IllegalArgumentException if {@code key} or {@code lease} breaks a limit
     * @throws DedupStoreException if the backend failed; whether the claim was taken is then unknown
     */
    default ClaimResult claim(String key, Duration lease) {
        return claim(key, lease, null);
    }

    /**
     * Claims {@code key} for {@code lease} as {@link #claim(String, Duration)} does, storing {@code fingerprint} with
     * the claim: a digest of the message's content (such as the SHA-256 of a canonical request), which every
     * {@link Duplicate} of the record returns ({@link Duplicate#fingerprint()}), in progress, completed or failed, so
     * the caller can tell a redelivery of the same message from another message reusing the key. Complete and fail
     * keep it; a take-over of an expired record replaces it with the new claim's (or none). The store only keeps and
     * returns it; comparing is the caller's ({@link IdempotentConsumer.Builder#fingerprint} does).
     *
     * @param key the message's dedup key, as for {@link #claim(String, Duration)}
     * @param lease how long the claim holds unless completed, released or extended: 1 ms to 366 days
     * @param fingerprint 1 to {@link DedupLimits#MAX_FINGERPRINT_BYTES} bytes, copied; or null for none, which is
     *     {@link #claim(String, Duration)}
     * @return a {@link Claim} when the caller won the key, else a {@link Duplicate} describing the live record,
     *     with its stored fingerprint
     * @throws IllegalArgumentException if {@code key}, {@code lease} or {@code fingerprint} breaks a limit; nothing
     *     is stored then
     * @throws DedupStoreException if the backend failed; whether the claim was taken is then unknown
     */
    ClaimResult claim(String key, Duration lease, byte[] fingerprint);

    /**
     * Turns the caller's in-progress claim into a completed record kept for {@code retention}, with an optional
     * {@code result} (null for none) that duplicates get back. False if the claim is no longer the caller's.
     *
     * @param claim the claim this caller won
     * @param retention how long duplicates are recognised from now: 1 ms to 366 days
     * @param result the serialized result, at most {@link DedupLimits#MAX_RESULT_BYTES}, or null for none
     * @return true if the record is now completed; false if the lease lapsed and the record is gone or another
     *     caller's, so nothing was written
     * @throws DedupStoreException if the backend failed
     */
    boolean complete(Claim claim, Duration retention, byte[] result);

    /**
     * Turns the caller's in-progress claim into a failed record kept for {@code retention}, with an optional
     * {@code error} payload (null for none) that duplicates get back as a {@link Duplicate} in state
     * {@link RecordState#FAILED}: for failures that retrying cannot fix, such as a declined payment. False
     * if the claim is no longer the caller's.
     *
     * @param claim the claim this caller won
     * @param retention how long the failure is reported to duplicates from now: 1 ms to 366 days
     * @param error the serialized error, at most {@link DedupLimits#MAX_RESULT_BYTES}, or null for none
     * @return true if the record is now failed; false if the claim is no longer the caller's, so nothing was written
     * @throws DedupStoreException if the backend failed
     */
    boolean fail(Claim claim, Duration retention, byte[] error);

    /**
     * Deletes the caller's in-progress claim so a redelivery can run at once.
     *
     * @param claim the claim this caller won
     * @return true if the claim was deleted; false if it is no longer the caller's, so nothing was deleted
     * @throws DedupStoreException if the backend failed; the claim then lapses with its lease
     */
    boolean release(Claim claim);

    /**
     * Renews the caller's in-progress claim to expire {@code lease} from now.
     *
     * @param claim the claim this caller won; its {@link Claim#expiresAt()} is not updated
     * @param lease the new lease, counted from now: 1 ms to 366 days
     * @return true if the claim was renewed; false if it is no longer the caller's
     * @throws DedupStoreException if the backend failed
     */
    boolean extend(Claim claim, Duration lease);

    /**
     * Claims every key, returning one result per key in input order; a key given twice yields one {@link Claim} and
     * then a duplicate. Stores override this with one round trip where the backend allows. A batch stores no
     * fingerprints (its claims are as {@link #claim(String, Duration)}), but its duplicates return the fingerprint
     * their record holds; claim one key at a time to store one.
     *
     * @param keys 0 to {@link DedupLimits#MAX_BATCH_KEYS} keys, each as for {@link #claim}
     * @param lease how long each won claim holds: 1 ms to 366 days
     * @return one result per key, in the order of {@code keys}
     * @throws IllegalArgumentException if the batch or a key breaks a limit; nothing is claimed then
     * @throws DedupStoreException if the backend failed; some keys may then have been claimed, and lapse
     *     with their lease
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

    /**
     * Ends many won claims at once, each as its {@link Settlement} says (complete, fail or release), with one answer
     * per settlement in input order: true where the claim was settled, false where it is no longer the caller's (the
     * lease lapsed, another caller took the key, an operator forgot it), so nothing was written for it. Each
     * settlement is decided alone; one claim lost does not stop the others. Stores override this with one round trip
     * where the backend allows: what a consumer that claimed a batch with {@link #claimAll} calls after running it.
     *
     * @param settlements 0 to {@link DedupLimits#MAX_BATCH_KEYS} settlements of this store's claims, no key twice
     * @return one answer per settlement, in the order of {@code settlements}
     * @throws IllegalArgumentException if the batch or an entry breaks a limit, or a key repeats; nothing is settled
     *     then
     * @throws DedupStoreException if the backend failed; some claims may then have been settled, and the others
     *     lapse with their lease
     */
    default List<Boolean> settleAll(List<Settlement> settlements) {
        DedupLimits.checkSettlements(namespace(), settlements);
        List<Boolean> settled = new ArrayList<>(settlements.size());
        for (Settlement settlement : settlements) {
            Claim claim = settlement.claim();
            settled.add(switch (settlement.kind()) {
                case COMPLETE -> complete(claim, settlement.retention(), settlement.payload());
                case FAIL -> fail(claim, settlement.retention(), settlement.payload());
                case RELEASE -> release(claim);
            });
        }
        return settled;
    }

    /**
     * Reads what the store holds for {@code key} right now, for operators and tools. Read-only: it takes no lock,
     * writes nothing and never extends a record. A record whose expiry has passed is absent, by the same rule a
     * claim uses, whether or not the backend has deleted it yet.
     *
     * @param key the key, as for {@link #claim(String, Duration)}
     * @return the live record, or empty when the key was never claimed, was released or forgotten, or has expired
     * @throws IllegalArgumentException if {@code key} breaks a limit
     * @throws DedupStoreException if the backend failed
     */
    Optional<KeyRecord> inspect(String key);

    /**
     * Deletes the record of {@code key} whatever its state and owner, so the next claim of the key wins: an
     * operator's action, for a key stuck behind a dead consumer's long lease or a result that must not be replayed.
     *
     * <p><b>This breaks the dedup guarantee for that key, on purpose:</b> a redelivery after it runs the handler
     * again, even when the key had completed. A consumer that held the key in progress has lost it without being
     * told; its later {@code complete}, {@code fail}, {@code release} or {@code extend} returns false (its claim is
     * no longer held), and cannot touch the record of whoever claims the key next.
     *
     * @param key the key, as for {@link #claim(String, Duration)}
     * @return true if a live record was removed; false if there was none (never claimed, released, already
     *     forgotten or expired)
     * @throws IllegalArgumentException if {@code key} breaks a limit; nothing is deleted then
     * @throws DedupStoreException if the backend failed; whether the record was deleted is then unknown
     */
    boolean forget(String key);

    /**
     * The store's non-blocking face, on its own asynchronous client: no thread waits for the backend. Stores whose
     * client blocks (PostgreSQL's JDBC) have none; wrap them with {@link AsyncDedupStore#onExecutor}, which runs
     * each call on an executor the caller chooses.
     *
     * @return the same store, as an {@link AsyncDedupStore}; closing this store closes it too
     * @throws UnsupportedOperationException if the store's client blocks; the message names the adapter
     */
    default AsyncDedupStore async() {
        throw new UnsupportedOperationException(getClass().getName() + " has no non-blocking client; run its"
                + " blocking calls on an executor of yours: AsyncDedupStore.onExecutor(store, executor)");
    }

    /** Releases the store's own resources; a client passed in by the application stays open. */
    @Override
    void close();
}
