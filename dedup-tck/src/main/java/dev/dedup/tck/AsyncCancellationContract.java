package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The async view and a caller that gives up: a claim stage cancelled before its answer (Reactor's {@code timeout()}
 * cancels it) must not leave a won claim holding its key for the lease, since nobody will ever complete or release
 * it. Runs on the store's own {@code async()}, or on {@code AsyncDedupStore.onExecutor} when it has none.
 */
abstract class AsyncCancellationContract extends ConcurrencyContract {
    /** How long a key held by a given-up claim may stay held: the release after the answer is one round trip. */
    private static final Duration GIVEN_BACK_WITHIN = Duration.ofSeconds(3);

    @Test
    @DisplayName("async: a claim and a claimAll cancelled before their answer give back what they won")
    void cancelledClaimsAreGivenBack() throws InterruptedException {
        AsyncDedupStore async = asyncView();
        String key = newKey();
        List<String> batch = List.of(newKey(), newKey());

        giveUp(async.claim(key, LONG));
        giveUp(async.claimAll(batch, LONG));
        Thread.sleep(clockTolerance().toMillis()); // the server has answered: a claim now cannot overtake them

        for (String each : List.of(key, batch.get(0), batch.get(1))) {
            assertThat(claimWithin(each, GIVEN_BACK_WITHIN)).as("a fresh claim of %s", each).isInstanceOf(Claim.class);
        }
    }

    private AsyncDedupStore asyncView() {
        try {
            return store.async();
        } catch (UnsupportedOperationException blockingClient) {
            return AsyncDedupStore.onExecutor(store, ForkJoinPool.commonPool());
        }
    }

    /**
     * Cancels {@code stage} as a caller's timeout does. A stage answered already (a store that answers at the call)
     * cannot be cancelled: its claims are then this caller's, who releases them.
     */
    private void giveUp(CompletionStage<?> stage) {
        CompletableFuture<?> future = stage.toCompletableFuture();
        if (!future.cancel(true)) {
            Object answer = future.join();
            for (Object each : answer instanceof List<?> results ? results : List.of(answer)) {
                if (each instanceof Claim claim) {
                    store.release(claim);
                }
            }
        }
    }

    /** Claims {@code key} until it is won or {@code limit} has passed; the last answer. */
    private ClaimResult claimWithin(String key, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        ClaimResult result = store.claim(key, LONG);
        while (!(result instanceof Claim) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            result = store.claim(key, LONG);
        }
        return result;
    }
}
