package dev.dedup;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The non-blocking face of a {@link DedupStore}: the same operations, the same contract and the same errors, with
 * each outcome delivered as a {@link CompletionStage} instead of a blocked thread. Get it from
 * {@link DedupStore#async()} on a store whose client is asynchronous (Redis), or wrap any store with
 * {@link #onExecutor(DedupStore, Executor)} to run its blocking calls on threads of your own.
 *
 * <p>Bad input throws at the call, as the blocking methods do ({@link IllegalArgumentException}, and
 * {@link IllegalStateException} after the store is closed), checked by the same code. A backend failure completes
 * the stage exceptionally with the {@link DedupStoreException} the blocking call would have thrown. From Reactor:
 * {@code Mono.fromCompletionStage(() -> store.async().claim(key, lease))}.
 *
 * <p>Cancelling a stage does not stop a call the server may already run. A {@code claim} or {@code claimAll} stage
 * cancelled before it completes (as Reactor's {@code timeout()} does) releases each claim the call then wins, so its
 * key is free again instead of held for the lease; any other cancelled call may still take effect.
 */
public interface AsyncDedupStore {

    /** {@return the namespace every key of the store lives in, as {@link DedupStore#namespace()}} */
    String namespace();

    /**
     * {@link DedupStore#claim(String, Duration)}, without blocking.
     *
     * @param key the message's dedup key, without namespace
     * @param lease how long the claim holds: 1 ms to 366 days
     * @return a stage completing with a {@link Claim} or a {@link Duplicate}
     * @throws IllegalArgumentException if {@code key} or {@code lease} breaks a limit
     */
    default CompletionStage<ClaimResult> claim(String key, Duration lease) {
        return claim(key, lease, null);
    }

    /**
     * {@link DedupStore#claim(String, Duration, byte[])}, without blocking.
     *
     * @param key the message's dedup key, without namespace
     * @param lease how long the claim holds: 1 ms to 366 days
     * @param fingerprint a digest of the message's content, copied at the call; or null for none
     * @return a stage completing with a {@link Claim} or a {@link Duplicate}
     * @throws IllegalArgumentException if an argument breaks a limit
     */
    CompletionStage<ClaimResult> claim(String key, Duration lease, byte[] fingerprint);

    /**
     * {@link DedupStore#complete(Claim, Duration, byte[])}, without blocking.
     *
     * @param claim the claim this caller won
     * @param retention how long duplicates are recognised from now: 1 ms to 366 days
     * @param result the serialized result, copied at the call; or null for none
     * @return a stage completing with true if the record is now completed, false if the claim is no longer held
     * @throws IllegalArgumentException if an argument breaks a limit
     */
    CompletionStage<Boolean> complete(Claim claim, Duration retention, byte[] result);

    /**
     * {@link DedupStore#fail(Claim, Duration, byte[])}, without blocking.
     *
     * @param claim the claim this caller won
     * @param retention how long the failure is reported to duplicates: 1 ms to 366 days
     * @param error the serialized error, copied at the call; or null for none
     * @return a stage completing with true if the record is now failed, false if the claim is no longer held
     * @throws IllegalArgumentException if an argument breaks a limit
     */
    CompletionStage<Boolean> fail(Claim claim, Duration retention, byte[] error);

    /**
     * {@link DedupStore#release(Claim)}, without blocking.
     *
     * @param claim the claim this caller won
     * @return a stage completing with true if the claim was deleted, false if it is no longer held
     * @throws IllegalArgumentException if {@code claim} is null or of another namespace
     */
    CompletionStage<Boolean> release(Claim claim);

    /**
     * {@link DedupStore#extend(Claim, Duration)}, without blocking.
     *
     * @param claim the claim this caller won
     * @param lease the new lease, counted from now: 1 ms to 366 days
     * @return a stage completing with true if the claim was renewed, false if it is no longer held
     * @throws IllegalArgumentException if an argument breaks a limit
     */
    CompletionStage<Boolean> extend(Claim claim, Duration lease);

    /**
     * {@link DedupStore#claimAll(List, Duration)}, without blocking.
     *
     * @param keys 0 to {@link DedupLimits#MAX_BATCH_KEYS} keys, copied at the call
     * @param lease how long each won claim holds: 1 ms to 366 days
     * @return a stage completing with one result per key, in the order of {@code keys}
     * @throws IllegalArgumentException if the batch or a key breaks a limit
     */
    CompletionStage<List<ClaimResult>> claimAll(List<String> keys, Duration lease);

    /**
     * {@link DedupStore#settleAll(List)}, without blocking.
     *
     * @param settlements 0 to {@link DedupLimits#MAX_BATCH_KEYS} settlements of this store's claims, no key twice;
     *     copied at the call
     * @return a stage completing with one answer per settlement, in the order of {@code settlements}
     * @throws IllegalArgumentException if the batch or an entry breaks a limit, or a key repeats
     */
    CompletionStage<List<Boolean>> settleAll(List<Settlement> settlements);

    /**
     * {@link DedupStore#inspect(String)}, without blocking.
     *
     * @param key the key
     * @return a stage completing with the live record, or empty
     * @throws IllegalArgumentException if {@code key} breaks a limit
     */
    CompletionStage<Optional<KeyRecord>> inspect(String key);

    /**
     * {@link DedupStore#forget(String)}, without blocking.
     *
     * @param key the key
     * @return a stage completing with true if a live record was removed
     * @throws IllegalArgumentException if {@code key} breaks a limit
     */
    CompletionStage<Boolean> forget(String key);

    /**
     * Runs a store's blocking calls on {@code executor}: for stores whose client blocks (PostgreSQL's JDBC), or any
     * store, when a caller must not block. Arguments are checked at the call, on the caller's thread; each call then
     * takes one of the executor's threads for as long as the blocking call lasts, so size it for the calls in
     * flight. Nothing runs on a pool you did not pass.
     *
     * @param store the store to run; closing it stays the caller's
     * @param executor where the blocking calls run; a rejected call completes its stage exceptionally
     * @return the store's non-blocking face, on {@code executor}
     */
    static AsyncDedupStore onExecutor(DedupStore store, Executor executor) {
        return dev.dedup.spi.AsyncViews.onExecutor(store, executor);
    }
}
