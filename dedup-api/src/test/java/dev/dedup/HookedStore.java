package dev.dedup;

import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.spi.AbstractDedupStore;
import java.time.Clock;
import java.time.Duration;

/**
 * The in-memory store with a hook before every backend call, for facade tests that need a store to be slow, to
 * fail, or to behave like a driver that refuses interrupted threads. Not a backend test: the facade's behaviour on
 * real servers is tested in the store modules.
 */
final class HookedStore extends AbstractDedupStore {
    /** Runs before each call, with the operation ("claim", "complete", "fail", "release", "extend", "inspect", "forget") and key. */
    @FunctionalInterface
    interface Hook {
        void before(String operation, String key);
    }

    private final InMemoryDedupStore delegate;
    private volatile Hook hook = (operation, key) -> {};

    HookedStore(String namespace, Clock clock) {
        super(namespace);
        this.delegate = new InMemoryDedupStore(namespace, clock);
    }

    HookedStore hook(Hook hook) {
        this.hook = hook;
        return this;
    }

    /** A hook that fails every call made on an interrupted thread, as Lettuce's blocking calls do. */
    static Hook refusingInterruptedThreads() {
        return (operation, key) -> {
            if (Thread.currentThread().isInterrupted()) {
                throw DedupStoreException.retryable("hooked store", operation, new InterruptedException());
            }
        };
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        hook.before("claim", key);
        return delegate.claim(key, lease, fingerprint);
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        hook.before(outcome == RecordState.FAILED ? "fail" : "complete", claim.key());
        return outcome == RecordState.FAILED ? delegate.fail(claim, retention, payload)
                : delegate.complete(claim, retention, payload);
    }

    @Override
    protected boolean doRelease(Claim claim) {
        hook.before("release", claim.key());
        return delegate.release(claim);
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        hook.before("extend", claim.key());
        return delegate.extend(claim, lease);
    }

    @Override
    protected KeyRecord doInspect(String key) {
        hook.before("inspect", key);
        return delegate.inspect(key).orElse(null);
    }

    @Override
    protected boolean doForget(String key) {
        hook.before("forget", key);
        return delegate.forget(key);
    }
}
