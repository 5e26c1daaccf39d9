package dev.dedup.spi;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The non-blocking operations a store with an asynchronous client implements, returned from
 * {@link AbstractDedupStore#asyncBackend()}. As with the {@code do*} methods, every argument has been checked (by
 * {@link AbstractDedupStore}'s view, with the blocking path's checks) and payloads copied; the same contract holds.
 * A backend failure completes the stage exceptionally with a {@link dev.dedup.DedupStoreException} (thrown
 * exceptions are turned into failed stages too); no method may block its caller.
 */
public interface AsyncBackend {

    /**
     * As {@link AbstractDedupStore#doClaim}, under a fresh owner token the backend draws itself.
     *
     * @param key a valid key, without namespace
     * @param lease a valid lease
     * @param fingerprint a checked copy, or null for none
     * @return a stage completing with a {@link Claim} or a {@link dev.dedup.Duplicate}
     */
    CompletionStage<ClaimResult> claim(String key, Duration lease, byte[] fingerprint);

    /**
     * As {@link AbstractDedupStore#doFinish}.
     *
     * @param claim a claim of the store's namespace
     * @param outcome {@link RecordState#COMPLETED} or {@link RecordState#FAILED}
     * @param retention a valid retention
     * @param payload a checked copy, or null for none
     * @return a stage completing with true if the record was ended
     */
    CompletionStage<Boolean> finish(Claim claim, RecordState outcome, Duration retention, byte[] payload);

    /**
     * As {@link AbstractDedupStore#doRelease}.
     *
     * @param claim a claim of the store's namespace
     * @return a stage completing with true if the record was deleted
     */
    CompletionStage<Boolean> release(Claim claim);

    /**
     * As {@link AbstractDedupStore#doExtend}.
     *
     * @param claim a claim of the store's namespace
     * @param lease a valid lease
     * @return a stage completing with true if the expiry was moved
     */
    CompletionStage<Boolean> extend(Claim claim, Duration lease);

    /**
     * As {@link AbstractDedupStore#doClaimAll}.
     *
     * @param keys 1 to {@link DedupLimits#MAX_BATCH_KEYS} valid keys, an immutable copy; a key may repeat
     * @param lease a valid lease
     * @return a stage completing with one result per key, in input order
     */
    CompletionStage<List<ClaimResult>> claimAll(List<String> keys, Duration lease);

    /**
     * As {@link AbstractDedupStore#doSettleAll}. This default sends every settlement's own call at once and gathers
     * the answers in input order; a backend overrides it to settle the batch in one round trip.
     *
     * @param settlements 1 to {@link DedupLimits#MAX_BATCH_KEYS} valid settlements, an immutable copy; no key
     *     repeats
     * @return a stage completing with one answer per settlement, in input order; failed if any call failed
     */
    default CompletionStage<List<Boolean>> settleAll(List<Settlement> settlements) {
        List<CompletableFuture<Boolean>> calls = new ArrayList<>(settlements.size());
        for (Settlement settlement : settlements) {
            CompletionStage<Boolean> call = settlement.kind() == Settlement.Kind.RELEASE
                    ? release(settlement.claim())
                    : finish(settlement.claim(), settlement.endState(), settlement.retention(), settlement.payload());
            calls.add(call.toCompletableFuture());
        }
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
                .thenApply(done -> calls.stream().map(CompletableFuture::join).toList());
    }

    /**
     * As {@link AbstractDedupStore#doInspect}.
     *
     * @param key a valid key
     * @return a stage completing with the live record, or null when there is none
     */
    CompletionStage<KeyRecord> inspect(String key);

    /**
     * As {@link AbstractDedupStore#doForget}.
     *
     * @param key a valid key
     * @return a stage completing with true if a live record was deleted
     */
    CompletionStage<Boolean> forget(String key);

    /**
     * A backend that runs {@code store}'s blocking calls on {@code executor}: what
     * {@link dev.dedup.AsyncDedupStore#onExecutor} uses, and, with a direct executor ({@code Runnable::run}), the
     * backend of a store whose calls never wait on I/O (the in-memory store).
     *
     * @param store the store whose public calls run
     * @param executor where they run
     * @return the backend
     */
    static AsyncBackend blockingOn(DedupStore store, Executor executor) {
        return new ExecutorBackend(store, executor);
    }
}
