package dev.dedup.kafka;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.KeyRecord;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Delegates to a real store, counting the calls per operation, and can be killed: from then on every call fails
 * before it reaches the store, as if the consumer's process had died. The delegate is not closed by this wrapper.
 *
 * <p>The delegate may change between calls ({@link #WatchedStore(Supplier)}): a transactional inbox hands over a
 * view of the store on the consumer's current transaction.
 */
public final class WatchedStore implements DedupStore {
    private final Supplier<DedupStore> delegate;
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final AtomicInteger refusedCompletions = new AtomicInteger();
    private final AtomicInteger unstoredCompletions = new AtomicInteger();
    private volatile boolean killed;

    public WatchedStore(DedupStore delegate) {
        this(() -> delegate);
    }

    /** @param delegate the store to call now, asked again on every call */
    WatchedStore(Supplier<DedupStore> delegate) {
        this.delegate = delegate;
    }

    /** Calls of {@code operation} that reached the store. */
    int calls(String operation) {
        AtomicInteger count = calls.get(operation);
        return count == null ? 0 : count.get();
    }

    public void kill() {
        killed = true;
    }

    /** Lets calls through again after {@link #kill()}, as a store that comes back after an outage. */
    public void revive() {
        killed = false;
    }

    /** Completions refused after the kill: the handler's effect happened, its completion never reached the store. */
    int refusedCompletions() {
        return refusedCompletions.get();
    }

    /**
     * Completions that reached the store but were not stored there: it failed (an outage) or refused (the lease had
     * lapsed). The handler's effect happened without its completion, as after a crash between the two.
     */
    int unstoredCompletions() {
        return unstoredCompletions.get();
    }

    private void enter(String operation) {
        if (killed) {
            if (operation.equals("complete")) {
                refusedCompletions.incrementAndGet();
            }
            throw DedupStoreException.retryable("killed store", operation, null);
        }
        calls.computeIfAbsent(operation, name -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public String namespace() {
        return delegate.get().namespace();
    }

    @Override
    public ClaimResult claim(String key, Duration lease, byte[] fingerprint) {
        enter("claim");
        return delegate.get().claim(key, lease, fingerprint);
    }

    @Override
    public List<ClaimResult> claimAll(List<String> keys, Duration lease) {
        enter("claimAll");
        return delegate.get().claimAll(keys, lease);
    }

    @Override
    public boolean complete(Claim claim, Duration retention, byte[] result) {
        enter("complete");
        try {
            boolean stored = delegate.get().complete(claim, retention, result);
            if (!stored) {
                unstoredCompletions.incrementAndGet();
            }
            return stored;
        } catch (RuntimeException e) {
            unstoredCompletions.incrementAndGet();
            throw e;
        }
    }

    @Override
    public boolean fail(Claim claim, Duration retention, byte[] error) {
        enter("fail");
        return delegate.get().fail(claim, retention, error);
    }

    @Override
    public boolean release(Claim claim) {
        enter("release");
        return delegate.get().release(claim);
    }

    @Override
    public List<Boolean> settleAll(List<Settlement> settlements) {
        enter("settleAll");
        try {
            List<Boolean> settled = delegate.get().settleAll(settlements);
            for (int i = 0; i < settlements.size(); i++) {
                if (settlements.get(i).kind() == Settlement.Kind.COMPLETE && !settled.get(i)) {
                    unstoredCompletions.incrementAndGet();
                }
            }
            return settled;
        } catch (RuntimeException e) {
            unstoredCompletions.addAndGet((int) settlements.stream()
                    .filter(settlement -> settlement.kind() == Settlement.Kind.COMPLETE).count());
            throw e;
        }
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
        enter("extend");
        return delegate.get().extend(claim, lease);
    }

    @Override
    public Optional<KeyRecord> inspect(String key) {
        enter("inspect");
        return delegate.get().inspect(key);
    }

    @Override
    public boolean forget(String key) {
        enter("forget");
        return delegate.get().forget(key);
    }

    @Override
    public void close() {
        // The delegate is shared by the test's consumers; the test closes it.
    }
}
