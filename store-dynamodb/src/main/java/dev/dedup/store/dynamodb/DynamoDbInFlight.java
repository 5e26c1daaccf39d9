package dev.dedup.store.dynamodb;

import java.util.Collection;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Sends one call per item with at most {@code limit} in flight and no thread waiting: each finished call starts the
 * next item from its completion callback. DynamoDB has no conditional batch write, so a batch is many calls, and an
 * unbounded burst would only queue in the HTTP client's connection pool until its acquire timeout fails them.
 */
final class DynamoDbInFlight<T> {
    private final Iterator<T> items; // guarded by this
    private final Function<T, CompletableFuture<?>> call;
    private final BooleanSupplier stop;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private int lanes; // guarded by this

    private DynamoDbInFlight(Collection<T> items, int limit, Function<T, CompletableFuture<?>> call,
            BooleanSupplier stop) {
        this.items = items.iterator();
        this.call = call;
        this.stop = stop;
        this.lanes = Math.min(limit, items.size());
    }

    /**
     * Calls {@code call} on each item, at most {@code limit} at a time, until the items run out or {@code stop}
     * says so (checked before each new call).
     *
     * @return a stage that completes once every call started has completed; it never fails, so each call must
     *     note its own outcome
     */
    static <T> CompletableFuture<Void> each(Collection<T> items, int limit, Function<T, CompletableFuture<?>> call,
            BooleanSupplier stop) {
        DynamoDbInFlight<T> inFlight = new DynamoDbInFlight<>(items, limit, call, stop);
        int lanes = inFlight.lanes;
        if (lanes == 0) {
            return CompletableFuture.completedFuture(null);
        }
        for (int i = 0; i < lanes; i++) {
            inFlight.lane();
        }
        return inFlight.done;
    }

    /** One lane: calls item after item, looping while calls finish at once, so the stack stays flat. */
    private void lane() {
        while (true) {
            T item = next();
            if (item == null) {
                if (laneEnded()) {
                    done.complete(null);
                }
                return;
            }
            CompletableFuture<?> sent;
            try {
                sent = call.apply(item);
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e); // the call's own bookkeeping is its job; go on
            }
            if (!sent.isDone()) {
                sent.whenComplete((result, failure) -> lane());
                return;
            }
        }
    }

    private synchronized T next() {
        return !stop.getAsBoolean() && items.hasNext() ? items.next() : null;
    }

    private synchronized boolean laneEnded() {
        return --lanes == 0;
    }
}
