package dev.dedup.store.redis;

import dev.dedup.DedupStoreException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The store's async calls in flight, so that closing it ends them. Their resends and deadlines run on the client's
 * timer, which stops with the client's resources (a store opened by URI shuts them down when it closes): a call
 * waiting on that timer would otherwise never complete.
 */
final class RedisPendingCalls {
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** Tracks {@code call} until it completes; a call started as the store closes fails at once. */
    <T> CompletableFuture<T> track(CompletableFuture<T> call) {
        pending.add(call);
        call.whenComplete((value, failure) -> pending.remove(call));
        if (closed) {
            failAll(); // raced with close: failAll may have run before this call was added
        }
        return call;
    }

    /** Fails every call still in flight, and any tracked from now on, with a retryable store error. */
    void failAll() {
        closed = true;
        for (CompletableFuture<?> call : pending) {
            call.completeExceptionally(closed());
        }
    }

    /** The error of a call the store's close ended before its reply. */
    static DedupStoreException closed() {
        return new DedupStoreException("Redis dedup store call failed: the store was closed before a reply", null,
                true);
    }
}
