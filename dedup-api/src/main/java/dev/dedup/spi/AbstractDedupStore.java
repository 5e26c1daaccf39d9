package dev.dedup.spi;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import java.nio.ByteBuffer;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The base every store extends: it checks every argument once, here, so all backends reject bad input alike and
 * before anything is written, and refuses calls after {@link #close()}. Backends implement the {@code do*} methods
 * and receive only valid input.
 */
public abstract class AbstractDedupStore implements DedupStore {
    /**
     * The owner tokens' random source, seeded when the first store is built (at an application's start, not on an
     * event loop). {@link UUID#randomUUID()} reads {@code /dev/urandom} on Linux as it goes, a file read that an async
     * claim would make on the caller's event-loop thread; a DRBG reads its seed once and then only computes.
     */
    private static final SecureRandom OWNER_TOKENS = seededRandom();

    private final String namespace;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile AsyncDedupStore asyncView;

    /**
     * Checks and keeps the store's namespace.
     *
     * @param namespace the namespace every key lives in, matching {@link DedupLimits#NAMESPACE_PATTERN}
     * @throws IllegalArgumentException if {@code namespace} does not match
     */
    protected AbstractDedupStore(String namespace) {
        this.namespace = DedupLimits.checkNamespace(namespace);
    }

    @Override
    public final String namespace() {
        return namespace;
    }

    @Override
    public final ClaimResult claim(String key, Duration lease) {
        return claim(key, lease, null);
    }

    @Override
    public final ClaimResult claim(String key, Duration lease, byte[] fingerprint) {
        checkOpen();
        byte[] copy = CallChecks.claim(key, lease, fingerprint);
        return doClaim(key, newOwnerToken(), lease, copy);
    }

    @Override
    public final boolean complete(Claim claim, Duration retention, byte[] result) {
        return finish(claim, RecordState.COMPLETED, retention, result);
    }

    @Override
    public final boolean fail(Claim claim, Duration retention, byte[] error) {
        return finish(claim, RecordState.FAILED, retention, error);
    }

    /** complete and fail differ only in the state they end the record in: one set of checks for both. */
    private boolean finish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        checkOpen();
        byte[] copy = CallChecks.finish(namespace, claim, retention, payload);
        return doFinish(claim, outcome, retention, copy);
    }

    @Override
    public final boolean release(Claim claim) {
        checkOpen();
        CallChecks.claimOf(namespace, claim);
        return doRelease(claim);
    }

    @Override
    public final boolean extend(Claim claim, Duration lease) {
        checkOpen();
        CallChecks.extend(namespace, claim, lease);
        return doExtend(claim, lease);
    }

    @Override
    public final List<ClaimResult> claimAll(List<String> keys, Duration lease) {
        checkOpen();
        List<String> copy = CallChecks.claimAll(keys, lease);
        if (copy.isEmpty()) {
            return List.of();
        }
        return List.copyOf(doClaimAll(copy, lease));
    }

    @Override
    public final List<Boolean> settleAll(List<Settlement> settlements) {
        checkOpen();
        List<Settlement> copy = CallChecks.settleAll(namespace, settlements);
        if (copy.isEmpty()) {
            return List.of();
        }
        return List.copyOf(doSettleAll(copy));
    }

    @Override
    public final Optional<KeyRecord> inspect(String key) {
        checkOpen();
        DedupLimits.checkKey(key);
        return Optional.ofNullable(doInspect(key));
    }

    @Override
    public final boolean forget(String key) {
        checkOpen();
        DedupLimits.checkKey(key);
        return doForget(key);
    }

    /**
     * The store's non-blocking view over {@link #asyncBackend()}, with the same argument checks as the blocking
     * calls, made on the caller's thread.
     *
     * @return the view; the same one on every call
     * @throws UnsupportedOperationException if the store has no {@link #asyncBackend()}; the message names
     *     {@link AsyncDedupStore#onExecutor}
     */
    @Override
    public final AsyncDedupStore async() {
        AsyncDedupStore view = asyncView;
        if (view == null) {
            AsyncBackend backend = asyncBackend();
            if (backend == null) {
                throw new UnsupportedOperationException(getClass().getName() + " has no non-blocking client; run"
                        + " its blocking calls on an executor of yours: AsyncDedupStore.onExecutor(store, executor)");
            }
            view = new CheckedAsyncStore(namespace, this::checkOpen, backend);
            asyncView = view; // a race builds two equal views; either will do
        }
        return view;
    }

    /**
     * The store's non-blocking operations, for {@link #async()}; called once, after construction. A store whose
     * client blocks returns null (this default), and {@link #async()} then points at
     * {@link AsyncDedupStore#onExecutor}.
     *
     * @return the backend's non-blocking operations, or null when its client blocks
     */
    protected AsyncBackend asyncBackend() {
        return null;
    }

    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) { // concurrent closes: exactly one runs doClose
            doClose();
        }
    }

    /**
     * Claims a valid key under the fresh {@code owner} token, storing {@code fingerprint} with the claim. A
     * take-over of an expired record replaces the record's fingerprint with this one (or removes it when null);
     * {@link #doFinish} and {@link #doExtend} keep it. A duplicate returns the live record's fingerprint.
     *
     * @param key a valid key, without namespace; the backend prefixes or scopes it with {@link #namespace()}
     * @param owner a fresh random token to store with the claim, from {@link #newOwnerToken()}
     * @param lease a valid lease, counted on the backend's clock where it has one
     * @param fingerprint 1 to {@link DedupLimits#MAX_FINGERPRINT_BYTES} bytes, already copied and checked, or null
     *     for none
     * @return a {@link Claim} carrying {@code owner}, or a {@link Duplicate} of the live record, with its fingerprint
     */
    protected abstract ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint);

    /**
     * Ends the record in {@code outcome} ({@link RecordState#COMPLETED} or {@link RecordState#FAILED}), kept for
     * {@code retention} with {@code payload} (the result or the error, may be null), iff it is in progress, carries
     * {@code claim.owner()} and has not expired.
     *
     * @param claim a claim of this store's namespace
     * @param outcome {@link RecordState#COMPLETED} or {@link RecordState#FAILED}
     * @param retention a valid retention, counted from now
     * @param payload the result or error, already copied and checked, or null for none
     * @return true if the record was ended; false if it was not the caller's, and nothing was written
     */
    protected abstract boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] payload);

    /**
     * Deletes the record iff it is in progress, carries {@code claim.owner()} and has not expired.
     *
     * @param claim a claim of this store's namespace
     * @return true if the record was deleted; false if it was not the caller's
     */
    protected abstract boolean doRelease(Claim claim);

    /**
     * Moves the expiry to now + {@code lease} iff the record is in progress, carries the owner and has not expired.
     *
     * @param claim a claim of this store's namespace
     * @param lease a valid lease, counted from now
     * @return true if the expiry was moved; false if the record was not the caller's
     */
    protected abstract boolean doExtend(Claim claim, Duration lease);

    /**
     * Reads the key's record without writing anything or taking a lock.
     *
     * @param key a valid key, without namespace
     * @return the record, with its owner token where the backend keeps one; or null when there is none or its
     *     expiry has passed (by the same clock and rule as {@link #doClaim})
     */
    protected abstract KeyRecord doInspect(String key);

    /**
     * Deletes the key's record whatever its state and owner. An expired record may be deleted too, but does not
     * count.
     *
     * @param key a valid key, without namespace
     * @return true if a live record was deleted; false if there was none, or only an expired one
     */
    protected abstract boolean doForget(String key);

    /**
     * Claims a valid, non-empty batch, results in input order. This default makes one call per key; a store
     * overrides it to claim the whole batch in one round trip. Use {@link #newOwnerToken()} for each claimed key.
     * A batch stores no fingerprint, but its duplicates return the fingerprint of their record.
     *
     * @param keys 1 to {@link DedupLimits#MAX_BATCH_KEYS} valid keys, an immutable copy; a key may repeat
     * @param lease a valid lease
     * @return one result per key, in input order; a repeated key gets one claim, then duplicates (see
     *     {@link #inInputOrder})
     */
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        List<ClaimResult> results = new ArrayList<>(keys.size());
        for (String key : keys) {
            results.add(doClaim(key, newOwnerToken(), lease, null));
        }
        return results;
    }

    /**
     * Settles a valid, non-empty batch, answers in input order. This default makes one call per settlement
     * ({@link #doFinish} or {@link #doRelease}); a store overrides it to settle the whole batch in one round trip.
     * Each settlement holds only under the rule of its single call: in progress, the claim's owner, not expired.
     *
     * @param settlements 1 to {@link DedupLimits#MAX_BATCH_KEYS} valid settlements of this store's claims, an
     *     immutable copy; no key repeats
     * @return one answer per settlement, in input order: true if it was settled, false if the claim was not the
     *     caller's and nothing was written for it
     */
    protected List<Boolean> doSettleAll(List<Settlement> settlements) {
        List<Boolean> settled = new ArrayList<>(settlements.size());
        for (Settlement settlement : settlements) {
            settled.add(settlement.kind() == Settlement.Kind.RELEASE ? doRelease(settlement.claim())
                    : doFinish(settlement.claim(), settlement.endState(), settlement.retention(),
                            settlement.payload()));
        }
        return settled;
    }

    /** Frees what the store created itself. Called once. */
    protected void doClose() {}

    /**
     * {@return a fresh random owner token: a random UUID, 36 characters} Public, as the batch helpers below, for a
     * store's {@link AsyncBackend}, which is not a subclass.
     */
    public static String newOwnerToken() {
        byte[] bits = new byte[16];
        OWNER_TOKENS.nextBytes(bits);
        bits[6] = (byte) ((bits[6] & 0x0f) | 0x40);   // version 4: random
        bits[8] = (byte) ((bits[8] & 0x3f) | 0x80);   // the IETF variant
        return new UUID(ByteBuffer.wrap(bits, 0, 8).getLong(), ByteBuffer.wrap(bits, 8, 8).getLong()).toString();
    }

    private static SecureRandom seededRandom() {
        SecureRandom random;
        try {
            random = SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException noDrbg) {
            random = new SecureRandom();
        }
        random.nextBytes(new byte[16]);   // seeds it now, on the thread that loads the class
        return random;
    }

    /**
     * One fresh owner token per distinct key, in first-seen order: what a batch claim sends to the backend, since a
     * key repeated in one batch is claimed once.
     *
     * @param keys the batch, possibly with repeats
     * @return a fresh owner token by distinct key, in first-seen order; mutable
     */
    public static Map<String, String> ownersOfDistinctKeys(List<String> keys) {
        Map<String, String> ownerByKey = new LinkedHashMap<>();
        for (String key : keys) {
            ownerByKey.computeIfAbsent(key, k -> newOwnerToken());
        }
        return ownerByKey;
    }

    /**
     * The batch's results in input order, from one result per distinct key. A repeat of a key the batch itself
     * claimed is a duplicate of that claim, in progress, as if the same batch had arrived twice.
     *
     * @param keys the batch as the caller gave it, with any repeats
     * @param byDistinctKey the backend's result for each distinct key of the batch
     * @return one result per entry of {@code keys}, in its order
     */
    public static List<ClaimResult> inInputOrder(List<String> keys, Map<String, ClaimResult> byDistinctKey) {
        List<ClaimResult> results = new ArrayList<>(keys.size());
        Set<String> seen = new HashSet<>();
        for (String key : keys) {
            ClaimResult result = byDistinctKey.get(key);
            if (!seen.add(key) && result instanceof Claim claim) {
                result = new Duplicate(key, RecordState.IN_PROGRESS, claim.expiresAt(), null, null);
            }
            results.add(result);
        }
        return results;
    }

    /** Refuses calls after {@link #close()}; the async views run it on the caller's thread too. */
    final void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this dedup store (namespace '" + namespace + "') is closed");
        }
    }
}
