package dev.dedup.spi;

import dev.dedup.DedupStoreException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Paces a store's retries of a claim whose write met a record that changed after it was read (released, expired,
 * taken over). Each such retry means another writer made progress, so a claim keeps going until it is decided or
 * its deadline passes, never for a fixed number of attempts: under churn on a hot key, a fixed count turns a
 * decidable claim into an error. The pause between attempts is tiny and jittered, so racers fall out of step.
 *
 * <pre>{@code
 * ContentionRetry retry = ContentionRetry.within(timeout);
 * while (true) {
 *     ClaimResult decided = tryOnce();
 *     if (decided != null) return decided;
 *     retry.pauseOrGiveUp("MongoDB dedup store", "claim");
 * }
 * }</pre>
 */
public final class ContentionRetry {
    /** The longest pause between two attempts: far below any lease, long enough to let a racer finish. */
    private static final long MAX_PAUSE_MICROS = 5_000;

    private final Duration budget;
    private final long deadlineNanos;
    private int attempts = 1;

    private ContentionRetry(Duration budget) {
        this.budget = budget;
        this.deadlineNanos = System.nanoTime() + budget.toNanos();
    }

    /**
     * Starts the clock for one claim that may retry for at most {@code budget}.
     *
     * @param budget how long the claim may keep retrying, positive; usually the store's operation timeout
     * @return a pacer for this one claim; not thread-safe
     * @throws IllegalArgumentException if {@code budget} is null, zero or negative
     */
    public static ContentionRetry within(Duration budget) {
        if (budget == null || budget.isNegative() || budget.isZero()) {
            throw new IllegalArgumentException("budget must be positive, but was " + budget);
        }
        return new ContentionRetry(budget);
    }

    /** {@return the attempts made so far, counting the first: 1 before any retry} */
    public int attempts() {
        return attempts;
    }

    /** {@return the nanoseconds left before the deadline, zero once it has passed} */
    public long remainingNanos() {
        return Math.max(0, deadlineNanos - System.nanoTime());
    }

    /**
     * Counts the attempt that just lost and returns the pause before the next one, in nanoseconds; throws a
     * retryable {@link DedupStoreException} when the deadline has passed. For async stores that schedule the retry.
     *
     * @param store the store's name for the message, such as {@code "MongoDB dedup store"}
     * @param operation the operation being retried, such as {@code "claim"}
     * @return the pause before the next attempt in nanoseconds: random, up to 5 ms, never past the deadline
     * @throws DedupStoreException (retryable) if the deadline has passed
     */
    public long nextPauseNanosOrGiveUp(String store, String operation) {
        if (remainingNanos() == 0) {
            throw new DedupStoreException(store + " " + operation + " found its record changed by concurrent writers "
                    + attempts + " times in a row within " + budget.toMillis() + " ms; retry", null, true);
        }
        attempts++;
        long cap = Math.min(MAX_PAUSE_MICROS, 100L << Math.min(attempts, 6));
        return Math.min(remainingNanos(), ThreadLocalRandom.current().nextLong(cap + 1) * 1_000);
    }

    /**
     * Sleeps the pause before the next attempt, or throws as {@link #nextPauseNanosOrGiveUp} does.
     *
     * @param store the store's name for the message, such as {@code "MongoDB dedup store"}
     * @param operation the operation being retried, such as {@code "claim"}
     * @throws DedupStoreException (retryable) if the deadline has passed
     */
    public void pauseOrGiveUp(String store, String operation) {
        LockSupport.parkNanos(nextPauseNanosOrGiveUp(store, operation));
    }
}
