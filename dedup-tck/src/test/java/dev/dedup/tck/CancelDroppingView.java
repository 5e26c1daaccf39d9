package dev.dedup.tck;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.KeyRecord;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The mutant {@code ASYNC_CANCEL_DROPPED}: a wrapper around a store's async view, as a metrics or tracing layer
 * might be, that sends each claim a moment later and hands back its own copy of the stage. Cancelling the copy does
 * not reach the view, so a claim its caller gave up on is still won, and held for its lease.
 */
record CancelDroppingView(AsyncDedupStore async) implements AsyncDedupStore {
    private static final Executor LATER = CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS);

    @Override
    public String namespace() {
        return async.namespace();
    }

    @Override
    public CompletionStage<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
        return later(() -> async.claim(key, lease, fingerprint));
    }

    @Override
    public CompletionStage<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
        return later(() -> async.claimAll(keys, lease));
    }

    private static <T> CompletionStage<T> later(Supplier<CompletionStage<T>> call) {
        CompletableFuture<T> copy = new CompletableFuture<>();
        LATER.execute(() -> {
            try {
                call.get().whenComplete((value, failure) -> {
                    if (failure == null) {
                        copy.complete(value);
                    } else {
                        copy.completeExceptionally(failure);
                    }
                });
            } catch (RuntimeException badInput) {
                copy.completeExceptionally(badInput);
            }
        });
        return copy;
    }

    @Override
    public CompletionStage<Boolean> complete(Claim claim, Duration retention, byte[] result) {
        return async.complete(claim, retention, result);
    }

    @Override
    public CompletionStage<Boolean> fail(Claim claim, Duration retention, byte[] error) {
        return async.fail(claim, retention, error);
    }

    @Override
    public CompletionStage<Boolean> release(Claim claim) {
        return async.release(claim);
    }

    @Override
    public CompletionStage<Boolean> extend(Claim claim, Duration lease) {
        return async.extend(claim, lease);
    }

    @Override
    public CompletionStage<List<Boolean>> settleAll(List<Settlement> settlements) {
        return async.settleAll(settlements);
    }

    @Override
    public CompletionStage<Optional<KeyRecord>> inspect(String key) {
        return async.inspect(key);
    }

    @Override
    public CompletionStage<Boolean> forget(String key) {
        return async.forget(key);
    }
}
