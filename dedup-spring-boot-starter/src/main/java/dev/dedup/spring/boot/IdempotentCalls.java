package dev.dedup.spring.boot;

/**
 * What the caller of an {@link Idempotent} method can ask about its last call on this thread:
 *
 * <pre>{@code
 * Receipt receipt = billing.charge(order);
 * if (IdempotentCalls.lastCallReplayed()) { ... }   // a stored result: charge(order) did not run now
 * }</pre>
 *
 * <p>Set by every call of a method that returns its result, whatever its outcome; a {@code Mono} or
 * {@code CompletionStage} method's calls complete on other threads and leave it alone (an
 * {@link IdempotentCallListener} sees their replays).
 */
public final class IdempotentCalls {
    private static final ThreadLocal<Boolean> LAST_REPLAYED = ThreadLocal.withInitial(() -> false);

    private IdempotentCalls() {}

    /**
     * {@return whether the last {@link Idempotent} call on this thread returned a stored result instead of running
     * its method; false after a call that ran, or failed, or before any call}
     */
    public static boolean lastCallReplayed() {
        return LAST_REPLAYED.get();
    }

    static void record(boolean replayed) {
        LAST_REPLAYED.set(replayed);
    }
}
