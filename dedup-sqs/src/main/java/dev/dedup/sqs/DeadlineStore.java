package dev.dedup.sqs;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A store whose claims never outlive a deadline, such as the end of a Lambda invocation: every claim and extend asks
 * for the shorter of its lease and the time left. A function that is stopped at its timeout cannot release its
 * claims, and a claim that outlived it would hold the message's redelivery off as {@code InProgressElsewhere}.
 */
final class DeadlineStore implements DedupStore {
    /** The shortest lease the store takes. */
    private static final Duration MIN_LEASE = Duration.ofMillis(1);

    private final DedupStore store;
    private final long deadlineNanos;

    DeadlineStore(DedupStore store, long deadlineNanos) {
        this.store = store;
        this.deadlineNanos = deadlineNanos;
    }

    private Duration bounded(Duration lease) {
        Duration left = Duration.ofNanos(deadlineNanos - System.nanoTime());
        if (left.compareTo(MIN_LEASE) < 0) {
            return MIN_LEASE;
        }
        return left.compareTo(lease) < 0 ? left : lease;
    }

    @Override
    public String namespace() {
        return store.namespace();
    }

    @Override
    public ClaimResult claim(String key, Duration lease, byte[] fingerprint) {
        return store.claim(key, bounded(lease), fingerprint);
    }

    @Override
    public List<ClaimResult> claimAll(List<String> keys, Duration lease) {
        return store.claimAll(keys, bounded(lease));
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
        return store.extend(claim, bounded(lease));
    }

    @Override
    public boolean complete(Claim claim, Duration retention, byte[] result) {
        return store.complete(claim, retention, result);
    }

    @Override
    public boolean fail(Claim claim, Duration retention, byte[] error) {
        return store.fail(claim, retention, error);
    }

    @Override
    public boolean release(Claim claim) {
        return store.release(claim);
    }

    @Override
    public List<Boolean> settleAll(List<Settlement> settlements) {
        return store.settleAll(settlements);
    }

    @Override
    public Optional<KeyRecord> inspect(String key) {
        return store.inspect(key);
    }

    @Override
    public boolean forget(String key) {
        return store.forget(key);
    }

    /** The view closes nothing: the store outlives the invocation. */
    @Override
    public void close() {}
}
