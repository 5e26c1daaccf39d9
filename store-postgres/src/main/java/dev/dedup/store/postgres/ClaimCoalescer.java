package dev.dedup.store.postgres;

import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends single claims that arrive together as one statement. A PostgreSQL claim costs a round trip and a commit
 * (a WAL flush), so sixteen threads claiming one by one pay sixteen of each; here at most {@link #leaders} claim
 * statements are in flight per store, and a claim that arrives while they are all out waits for the next one,
 * which carries every claim waiting by then. A lone caller finds a free slot and sends its claim at once, alone,
 * as before: coalescing only starts when more claims are in flight than there are slots.
 *
 * <p>Whoever takes a slot is the leader of one batch: it drains the waiting claims (its own among them, one claim
 * per key, since a batch claims each key once: a second claim of a key waits for the next batch and then meets the
 * first as a duplicate, as it would have alone), runs them and hands each caller its answer or the batch's error.
 * Leaving the slot it wakes the oldest waiting caller, which leads the next batch. Every claim keeps its own owner,
 * lease and fingerprint, so the answers are exactly those of claims made one at a time.
 */
final class ClaimCoalescer {
    /** The longest a waiting caller sleeps before looking again, should a wake-up be missed. */
    private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** One caller's claim, answered by whichever caller leads its batch. */
    static final class Request {
        final String key;
        final String owner;
        final Duration lease;
        final byte[] fingerprint;
        private final Thread caller = Thread.currentThread();
        private volatile ClaimResult result;
        private volatile RuntimeException failure;

        Request(String key, String owner, Duration lease, byte[] fingerprint) {
            this.key = key;
            this.owner = owner;
            this.lease = lease;
            this.fingerprint = fingerprint;
        }

        private boolean answered() {
            return result != null || failure != null;
        }

        private void answer(ClaimResult value, RuntimeException error) {
            failure = error;
            result = value;
            LockSupport.unpark(caller);
        }
    }

    /** Runs a batch: one claim alone on the single-claim path, more as one statement. */
    interface Batch {
        /** @return the answer of one claim */
        ClaimResult claimOne(Request request);

        /** @return the answer of each of 2 or more claims of distinct keys, by request */
        Map<Request, ClaimResult> claimTogether(List<Request> requests);
    }

    private final Semaphore leaders;
    private final Batch batch;
    private final ConcurrentLinkedQueue<Request> waiting = new ConcurrentLinkedQueue<>();

    /**
     * @param leaders how many claim statements may be in flight at once, at least 1
     * @param batch what runs a batch
     */
    ClaimCoalescer(int leaders, Batch batch) {
        this.leaders = new Semaphore(leaders);
        this.batch = batch;
    }

    /** Claims alone when a slot is free, else together with the claims waiting when a slot frees up. */
    ClaimResult claim(Request mine) {
        waiting.add(mine);
        boolean interrupted = false;
        try {
            while (!mine.answered()) {
                if (leaders.tryAcquire()) {
                    try {
                        lead();
                    } finally {
                        leaders.release();
                        wakeOldestWaiter();
                    }
                } else {
                    LockSupport.parkNanos(this, RECHECK_NANOS);
                    // The claim may already be out in another caller's batch: wait for its answer, whose statement
                    // is bounded by the store's timeout, rather than leave a claim nobody would give back.
                    interrupted |= Thread.interrupted();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (mine.failure != null) {
            throw mine.failure;
        }
        return mine.result;
    }

    /** Takes the waiting claims, one per key, and answers each of them. */
    private void lead() {
        List<Request> taken = new ArrayList<>();
        List<Request> repeats = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        Request next;
        while (taken.size() < DedupLimits.MAX_BATCH_KEYS && (next = waiting.poll()) != null) {
            (keys.add(next.key) ? taken : repeats).add(next);
        }
        waiting.addAll(repeats);
        if (taken.isEmpty()) {
            return;
        }
        try {
            if (taken.size() == 1) {
                taken.get(0).answer(batch.claimOne(taken.get(0)), null);
                return;
            }
            Map<Request, ClaimResult> answers = batch.claimTogether(taken);
            for (Request request : taken) {
                request.answer(answers.get(request), null);
            }
        } catch (RuntimeException e) {
            for (Request request : taken) {
                if (!request.answered()) {
                    request.answer(null, e);
                }
            }
        } catch (Error e) {
            for (Request request : taken) {
                if (!request.answered()) {
                    request.answer(null, new DedupStoreException("the claim batch this claim went out in failed"
                            + " with " + e, e, false));
                }
            }
            throw e;
        }
    }

    private void wakeOldestWaiter() {
        Request oldest = waiting.peek();
        if (oldest != null) {
            LockSupport.unpark(oldest.caller);
        }
    }
}
