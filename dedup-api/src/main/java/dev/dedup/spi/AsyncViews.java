package dev.dedup.spi;

import dev.dedup.AsyncDedupStore;
import dev.dedup.DedupStore;
import java.util.Objects;
import java.util.concurrent.Executor;

/** Builds the {@link AsyncDedupStore} views; applications call {@link AsyncDedupStore#onExecutor} instead. */
public final class AsyncViews {
    private AsyncViews() {}

    /**
     * What {@link AsyncDedupStore#onExecutor} returns: {@code store}'s blocking calls on {@code executor}, with
     * arguments checked on the caller's thread.
     *
     * @param store the store to run
     * @param executor where its blocking calls run
     * @return the non-blocking view
     */
    public static AsyncDedupStore onExecutor(DedupStore store, Executor executor) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(executor, "executor");
        // A store of ours refuses calls after close on the caller's thread too; another store on the executor.
        Runnable checkOpen = store instanceof AbstractDedupStore checked ? checked::checkOpen : () -> {};
        return new CheckedAsyncStore(store.namespace(), checkOpen, new ExecutorBackend(store, executor));
    }
}
