package dev.dedup;

/**
 * The backend failed (unreachable, timed out, refused the operation). The outcome of the operation is unknown to the
 * caller, so a consumer must not ack the message: nack it and let the broker redeliver. The driver's exception is
 * the cause. Messages never contain credentials.
 */
public class DedupStoreException extends DedupException {
    private static final long serialVersionUID = 1L;

    private final boolean retryable;

    public DedupStoreException(String message, Throwable cause, boolean retryable) {
        super(message, cause);
        this.retryable = retryable;
    }

    /** A failure of {@code operation} ("claim", "complete", ...) on {@code store}, worth retrying later. */
    public static DedupStoreException retryable(String store, String operation, Throwable cause) {
        return new DedupStoreException(store + " " + operation + " failed: " + describe(cause), cause, true);
    }

    /** A failure that will not go away by retrying (for example a permission or schema problem). */
    public static DedupStoreException permanent(String store, String operation, Throwable cause) {
        return new DedupStoreException(store + " " + operation + " failed permanently: " + describe(cause), cause,
                false);
    }

    /** True when the same call may succeed later (connection lost, timeout, failover). */
    public boolean isRetryable() {
        return retryable;
    }

    private static String describe(Throwable cause) {
        return cause == null ? "unknown cause" : cause.getClass().getSimpleName();
    }
}
