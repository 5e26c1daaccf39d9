package dev.dedup;

/**
 * The backend failed (unreachable, timed out, refused the operation). The outcome of the operation is unknown to the
 * caller, so a consumer must not ack the message: nack it and let the broker redeliver. The driver's exception is
 * the cause. Messages never contain credentials.
 */
public class DedupStoreException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** Whether the same call may succeed later; see {@link #isRetryable()}. */
    private final boolean retryable;

    /**
     * Creates the exception; stores usually call {@link #retryable} or {@link #permanent} instead.
     *
     * @param message what failed, naming the store and the operation; never a credential
     * @param cause the driver's exception, or null
     * @param retryable whether the same call may succeed later, see {@link #isRetryable()}
     */
    public DedupStoreException(String message, Throwable cause, boolean retryable) {
        super(message, cause);
        this.retryable = retryable;
    }

    /**
     * A failure of {@code operation} ("claim", "complete", ...) on {@code store}, worth retrying later.
     *
     * @param store the store's name for the message, such as {@code "Redis"}
     * @param operation the operation that failed, such as {@code "claim"}
     * @param cause the driver's exception, or null; only its class name goes into the message, which keeps
     *     credentials a driver may echo out of it
     * @return the exception, to throw; {@link #isRetryable()} is true
     */
    public static DedupStoreException retryable(String store, String operation, Throwable cause) {
        return new DedupStoreException(store + " " + operation + " failed: " + describe(cause), cause, true);
    }

    /**
     * A failure that will not go away by retrying (for example a permission or schema problem).
     *
     * @param store the store's name for the message, such as {@code "Redis"}
     * @param operation the operation that failed, such as {@code "claim"}
     * @param cause the driver's exception, or null; only its class name goes into the message
     * @return the exception, to throw; {@link #isRetryable()} is false
     */
    public static DedupStoreException permanent(String store, String operation, Throwable cause) {
        return new DedupStoreException(store + " " + operation + " failed permanently: " + describe(cause), cause,
                false);
    }

    /** {@return true when the same call may succeed later (connection lost, timeout, failover)} */
    public boolean isRetryable() {
        return retryable;
    }

    private static String describe(Throwable cause) {
        return cause == null ? "unknown cause" : cause.getClass().getSimpleName();
    }
}
