package dev.dedup.spi;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The one {@link AsyncDedupStore} implementation: checks every argument on the caller's thread with
 * {@link CallChecks}, as the blocking calls do, then hands valid input to an {@link AsyncBackend}. What comes back
 * is completed with the backend's own exception, never a {@link CompletionException} around it, and a backend
 * that throws instead of failing its stage fails the stage all the same.
 */
final class CheckedAsyncStore implements AsyncDedupStore {
    private final String namespace;
    private final Runnable checkOpen;
    private final AsyncBackend backend;

    CheckedAsyncStore(String namespace, Runnable checkOpen, AsyncBackend backend) {
        this.namespace = DedupLimits.checkNamespace(namespace);
        this.checkOpen = checkOpen;
        this.backend = backend;
    }

    @Override
    public String namespace() {
        return namespace;
    }

    @Override
    public CompletionStage<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
        checkOpen.run();
        byte[] copy = CallChecks.claim(key, lease, fingerprint);
        return call(() -> backend.claim(key, lease, copy), this::releaseIfClaimed);
    }

    @Override
    public CompletionStage<Boolean> complete(Claim claim, Duration retention, byte[] result) {
        return finish(claim, RecordState.COMPLETED, retention, result);
    }

    @Override
    public CompletionStage<Boolean> fail(Claim claim, Duration retention, byte[] error) {
        return finish(claim, RecordState.FAILED, retention, error);
    }

    private CompletionStage<Boolean> finish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        checkOpen.run();
        byte[] copy = CallChecks.finish(namespace, claim, retention, payload);
        return call(() -> backend.finish(claim, outcome, retention, copy));
    }

    @Override
    public CompletionStage<Boolean> release(Claim claim) {
        checkOpen.run();
        CallChecks.claimOf(namespace, claim);
        return call(() -> backend.release(claim));
    }

    @Override
    public CompletionStage<Boolean> extend(Claim claim, Duration lease) {
        checkOpen.run();
        CallChecks.extend(namespace, claim, lease);
        return call(() -> backend.extend(claim, lease));
    }

    @Override
    public CompletionStage<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
        checkOpen.run();
        List<String> copy = CallChecks.claimAll(keys, lease);
        if (copy.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        return call(() -> backend.claimAll(copy, lease).thenApply(List::copyOf),
                results -> results.forEach(this::releaseIfClaimed));
    }

    @Override
    public CompletionStage<List<Boolean>> settleAll(List<Settlement> settlements) {
        checkOpen.run();
        List<Settlement> copy = CallChecks.settleAll(namespace, settlements);
        if (copy.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        return call(() -> backend.settleAll(copy).thenApply(List::copyOf));
    }

    @Override
    public CompletionStage<Optional<KeyRecord>> inspect(String key) {
        checkOpen.run();
        DedupLimits.checkKey(key);
        return call(() -> backend.inspect(key).thenApply(Optional::ofNullable));
    }

    @Override
    public CompletionStage<Boolean> forget(String key) {
        checkOpen.run();
        DedupLimits.checkKey(key);
        return call(() -> backend.forget(key));
    }

    /** Runs a backend call on valid input; its failure, thrown or staged, completes the returned stage. */
    private static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> backendCall) {
        return call(backendCall, unclaimed -> {});
    }

    /**
     * As {@link #call(Supplier)}; and when the caller gave up on the returned stage (cancelled it, as Reactor's
     * {@code timeout()} does) before the backend answered, {@code undo} gets the answer nobody will read, so a claim
     * won after the caller left does not hold its key for the whole lease.
     */
    private static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> backendCall, Consumer<T> undo) {
        CompletionStage<T> stage;
        try {
            stage = backendCall.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        stage.whenComplete((value, failure) -> {
            if (failure != null) {
                result.completeExceptionally(unwrap(failure));
            } else if (!result.complete(value)) {
                undo.accept(value);
            }
        });
        return result;
    }

    /** Gives back a claim its caller will never see, by its owner token; if that fails, it lapses with its lease. */
    private void releaseIfClaimed(ClaimResult result) {
        if (result instanceof Claim claim) {
            try {
                backend.release(claim);
            } catch (RuntimeException e) {
                // the store is closing or failing: the claim lapses with its lease, as after any failed release
            }
        }
    }

    /** CompletableFuture wraps a dependent stage's failure; the caller gets the store's exception itself. */
    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
