package dev.dedup.memory;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A thread-safe store in this JVM's memory: the reference implementation of the contract, the store for users'
 * unit tests and for single-process consumers. Records vanish with the process, so it cannot deduplicate across
 * processes or restarts.
 *
 * <p>Each operation is one atomic {@link ConcurrentHashMap#compute} on the key. Time comes from the injected
 * {@link Clock}. Expired records are swept whenever the map has doubled since the last sweep (and holds at least
 * {@value #MIN_SWEEP_SIZE} records): memory stays within about twice the live records, and the sweeps cost a
 * constant amount per claim, however large the map grows.
 */
public final class InMemoryDedupStore extends AbstractDedupStore {
    static final int MIN_SWEEP_SIZE = 1024;

    private record Entry(String owner, RecordState state, Instant expiresAt, byte[] result, byte[] fingerprint) {
        boolean liveAt(Instant now) {
            return expiresAt.isAfter(now);
        }

        boolean heldBy(String candidate, Instant now) {
            return state == RecordState.IN_PROGRESS && owner.equals(candidate) && liveAt(now);
        }
    }

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicInteger nextSweepAt = new AtomicInteger(MIN_SWEEP_SIZE);
    private final Clock clock;

    /** A store in the {@code default} namespace on the system clock. */
    public InMemoryDedupStore() {
        this(DedupLimits.DEFAULT_NAMESPACE, Clock.systemUTC());
    }

    /**
     * A store in {@code namespace} on the system clock.
     *
     * @param namespace the namespace every key lives in, matching {@link DedupLimits#NAMESPACE_PATTERN}; two stores in
     *     one JVM never share records, whatever their namespaces
     */
    public InMemoryDedupStore(String namespace) {
        this(namespace, Clock.systemUTC());
    }

    /**
     * A store whose expiry follows {@code clock}: pass a controllable clock to test expiry without waiting.
     *
     * @param namespace the namespace every key lives in, matching {@link DedupLimits#NAMESPACE_PATTERN}
     * @param clock the time every lease and retention is counted on, read on every operation
     */
    public InMemoryDedupStore(String namespace, Clock clock) {
        super(namespace);
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** {@return the records held now, live or expired but not yet swept} */
    public int size() {
        return entries.size();
    }

    /**
     * Removes expired records now (also done as the map doubles).
     *
     * @return how many records were removed
     */
    public int sweepExpired() {
        Instant now = clock.instant();
        int removed = 0;
        for (var entry : entries.entrySet()) {
            // remove(key, value) only removes the exact record seen, never one a concurrent claim just wrote.
            if (!entry.getValue().liveAt(now) && entries.remove(entry.getKey(), entry.getValue())) {
                removed++;
            }
        }
        return removed;
    }

    /** Nothing here waits on I/O: the async view runs each call at once and returns it completed. */
    @Override
    protected AsyncBackend asyncBackend() {
        return AsyncBackend.blockingOn(this, Runnable::run);
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        int size = entries.size();
        int threshold = nextSweepAt.get();
        if (size >= threshold && nextSweepAt.compareAndSet(threshold, Integer.MAX_VALUE)) {
            // One thread sweeps; the next sweep waits until the map doubles again.
            sweepExpired();
            nextSweepAt.set((int) Math.min(Integer.MAX_VALUE, Math.max(MIN_SWEEP_SIZE, 2L * entries.size())));
        }
        Instant now = clock.instant();
        Entry fresh = new Entry(owner, RecordState.IN_PROGRESS, now.plus(lease), null, fingerprint);
        Entry current = entries.compute(key, (k, existing) -> existing != null && existing.liveAt(now) ? existing : fresh);
        if (current == fresh) {
            return new Claim(namespace(), key, owner, fresh.expiresAt());
        }
        return new Duplicate(key, current.state(), current.expiresAt(), current.result(), current.fingerprint());
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        Instant now = clock.instant();
        boolean[] done = {false};
        entries.computeIfPresent(claim.key(), (k, existing) -> {
            done[0] = existing.heldBy(claim.owner(), now);
            return done[0] ? new Entry(claim.owner(), outcome, now.plus(retention), payload, existing.fingerprint())
                    : existing;
        });
        return done[0];
    }

    @Override
    protected boolean doRelease(Claim claim) {
        Instant now = clock.instant();
        boolean[] released = {false};
        entries.computeIfPresent(claim.key(), (k, existing) -> {
            released[0] = existing.heldBy(claim.owner(), now);
            return released[0] ? null : existing;
        });
        return released[0];
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        Instant now = clock.instant();
        boolean[] renewed = {false};
        entries.computeIfPresent(claim.key(), (k, existing) -> {
            renewed[0] = existing.heldBy(claim.owner(), now);
            return renewed[0] ? new Entry(claim.owner(), RecordState.IN_PROGRESS, now.plus(lease), null,
                    existing.fingerprint()) : existing;
        });
        return renewed[0];
    }

    @Override
    protected KeyRecord doInspect(String key) {
        Entry entry = entries.get(key);
        if (entry == null || !entry.liveAt(clock.instant())) {
            return null;
        }
        return new KeyRecord(key, entry.state(), entry.expiresAt(), entry.owner(), entry.fingerprint(),
                entry.result());
    }

    @Override
    protected boolean doForget(String key) {
        Instant now = clock.instant();
        Entry removed = entries.remove(key);
        return removed != null && removed.liveAt(now);
    }
}
