package dev.dedup.examples.readme;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.function.Function;

/** docs/spi.md's async API examples, kept compiling. */
final class AsyncUsage {
    private AsyncUsage() {}

    static CompletionStage<Boolean> process(DedupStore store, String key,
            Function<String, CompletionStage<byte[]>> handler) {
        // readme:async
        AsyncDedupStore async = store.async(); // Redis, DynamoDB, MongoDB: native, no thread waits for a reply
        return async.claim(key, Duration.ofMinutes(5)).thenCompose(result -> {
            if (!(result instanceof Claim claim)) {
                return CompletableFuture.completedFuture(false); // a duplicate: done, or in progress elsewhere
            }
            return handler.apply(key)
                    .thenCompose(reply -> async.complete(claim, Duration.ofDays(7), reply))
                    .exceptionallyCompose(failure -> async.release(claim) // let a redelivery run at once
                            .thenCompose(released -> CompletableFuture.failedStage(failure)));
        });
        // end
    }

    static AsyncDedupStore onPool(DedupStore postgres, ExecutorService pool) {
        // readme:async-executor
        // JDBC blocks: each call holds a thread of your pool while it runs; size it for the calls in flight.
        AsyncDedupStore async = AsyncDedupStore.onExecutor(postgres, pool);
        // end
        return async;
    }
}
