package dev.dedup.spi;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/** A blocking store's calls, each run on a caller-supplied executor: the adapter for stores whose client blocks. */
final class ExecutorBackend implements AsyncBackend {
    private final DedupStore store;
    private final Executor executor;

    ExecutorBackend(DedupStore store, Executor executor) {
        this.store = store;
        this.executor = executor;
    }

    @Override
    public CompletionStage<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
        return on(() -> store.claim(key, lease, fingerprint));
    }

    @Override
    public CompletionStage<Boolean> finish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        return on(() -> outcome == RecordState.FAILED ? store.fail(claim, retention, payload)
                : store.complete(claim, retention, payload));
    }

    @Override
    public CompletionStage<Boolean> release(Claim claim) {
        return on(() -> store.release(claim));
    }

    @Override
    public CompletionStage<Boolean> extend(Claim claim, Duration lease) {
        return on(() -> store.extend(claim, lease));
    }

    @Override
    public CompletionStage<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
        return on(() -> store.claimAll(keys, lease));
    }

    @Override
    public CompletionStage<List<Boolean>> settleAll(List<Settlement> settlements) {
        return on(() -> store.settleAll(settlements));
    }

    @Override
    public CompletionStage<KeyRecord> inspect(String key) {
        return on(() -> store.inspect(key).orElse(null));
    }

    @Override
    public CompletionStage<Boolean> forget(String key) {
        return on(() -> store.forget(key));
    }

    private <T> CompletionStage<T> on(Supplier<T> call) {
        return CompletableFuture.supplyAsync(call, executor);
    }
}
