package dev.dedup.store.postgres;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * <p>Whoever takes a slot is the leader of one batch: it drains the waiting claims (its own among them), sends the
 * first claim of each key and hands each caller its answer or the batch's error. A later claim of a key in the
 * same batch is answered from the first's: a duplicate of the record the first found or made, which is what it
 * would have met had it gone out right after, with no round trip of its own (the live-duplicate hot path, where
 * every caller claims one key).
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
        /** Set when a leader drains it: from then on only that leader's batch answers it. */
        private volatile boolean taken;
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
    private final String namespace;
    private final long timeoutNanos;
    private final ConcurrentLinkedQueue<Request> waiting = new ConcurrentLinkedQueue<>();

    /**
     * @param leaders how many claim statements may be in flight at once, at least 1
     * @param batch what runs a batch
     * @param namespace the store's namespace, for the error of a claim that found no slot in time
     * @param timeout the store's timeout: the longest a claim waits for a slot before failing, retryably
     */
    ClaimCoalescer(int leaders, Batch batch, String namespace, Duration timeout) {
        this.leaders = new Semaphore(leaders);
        this.batch = batch;
        this.namespace = namespace;
        this.timeoutNanos = timeout.toNanos();
    }

    /**
     * Claims alone when a slot is free, else together with the claims waiting when a slot frees up. A claim that no
     * batch took within the store's timeout (the statements in flight are stalled) fails as a claim on a stalled
     * server would, retryably; one a batch took waits for that batch's answer, bounded by the timeout of its
     * statement, rather than leave a claim nobody would give back.
     */
    ClaimResult claim(Request mine) {
        long deadline = System.nanoTime() + timeoutNanos;
        waiting.add(mine);
        boolean interrupted = false;
        try {
            while (!mine.answered()) {
                if (!mine.taken && leaders.tryAcquire()) {
                    // A leader's interrupt must not fail the other callers' claims in its batch.
                    interrupted |= Thread.interrupted();
                    try {
                        lead();
                    } finally {
                        leaders.release();
                        wakeOldestWaiter();
                    }
                } else if (!mine.taken && System.nanoTime() - deadline > 0 && waiting.remove(mine)) {
                    throw new DedupStoreException("PostgreSQL dedup store (namespace '" + namespace + "'): claim of"
                            + " key '" + mine.key + "' found no free statement within the store's timeout ("
                            + Duration.ofNanos(timeoutNanos) + "); the statements in flight are stalled", null, true);
                } else {
                    LockSupport.parkNanos(this, RECHECK_NANOS);
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

    /**
     * Takes the waiting claims and answers each of them: the first claim of each key goes out, and a later claim of
     * the same key in the batch gets what it would have got right after: the first's record, as a duplicate.
     */
    private void lead() {
        Map<String, List<Request>> byKey = new LinkedHashMap<>();
        Request next;
        for (int taken = 0; taken < DedupLimits.MAX_BATCH_KEYS && (next = waiting.poll()) != null; taken++) {
            next.taken = true;
            byKey.computeIfAbsent(next.key, key -> new ArrayList<>(1)).add(next);
        }
        if (byKey.isEmpty()) {
            return;
        }
        List<Request> firsts = byKey.values().stream().map(requests -> requests.get(0)).toList();
        try {
            Map<Request, ClaimResult> answers = firsts.size() == 1
                    ? Map.of(firsts.get(0), batch.claimOne(firsts.get(0)))
                    : batch.claimTogether(firsts);
            for (List<Request> requests : byKey.values()) {
                Request first = requests.get(0);
                ClaimResult result = answers.get(first);
                first.answer(result, null);
                for (Request repeat : requests.subList(1, requests.size())) {
                    repeat.answer(seenAfter(first, result), null);
                }
            }
        } catch (RuntimeException e) {
            answerUnanswered(byKey, e);
        } catch (Error e) {
            answerUnanswered(byKey, new DedupStoreException("the claim batch this claim went out in failed with "
                    + e, e, false));
            throw e;
        }
    }

    /** What a claim of the same key sees right after {@code first}'s: its record, held by whoever holds it. */
    private static ClaimResult seenAfter(Request first, ClaimResult result) {
        if (result instanceof Claim claim) {
            return new Duplicate(first.key, RecordState.IN_PROGRESS, claim.expiresAt(), null, first.fingerprint);
        }
        return result;
    }

    private static void answerUnanswered(Map<String, List<Request>> byKey, RuntimeException failure) {
        for (List<Request> requests : byKey.values()) {
            for (Request request : requests) {
                if (!request.answered()) {
                    request.answer(null, failure);
                }
            }
        }
    }

    private void wakeOldestWaiter() {
        Request oldest = waiting.peek();
        if (oldest != null) {
            LockSupport.unpark(oldest.caller);
        }
    }
}
