package dev.dedup.spring.boot;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How long a duplicate of a running call may still wait for it ({@code dedup.http.in-progress-wait},
 * {@link Idempotent#inProgressWait()}), in growing pauses: a few short ones for quick handlers, then at most every
 * half second. One per waiting call; not thread-safe.
 */
final class InProgressWait {
    /** The longest wait there is: a duplicate that would wait longer belongs to a retry with back-off. */
    static final Duration LONGEST = Duration.ofSeconds(60);
    private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final long end;
    private long pause = FIRST_PAUSE_NANOS;

    InProgressWait(Duration wait) {
        this.end = System.nanoTime() + wait.toNanos();
    }

    /** {@return the pause before the next try, or null when the wait is over} */
    Duration nextPause() {
        long left = end - System.nanoTime();
        if (left <= 0) {
            return null;
        }
        long next = Math.min(pause, left);
        pause = Math.min(pause * 2, LONGEST_PAUSE_NANOS);
        return Duration.ofNanos(next);
    }

    /** Sleeps the next pause on this thread; false when the wait is over or the thread was interrupted. */
    boolean sleep() {
        Duration next = nextPause();
        if (next == null) {
            return false;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(next.toNanos());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
