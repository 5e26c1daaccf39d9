package dev.dedup;

/** Base of the exceptions dedup throws. A duplicate claim is never one of them: it is a {@link Duplicate} value. */
public class DedupException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed; never a credential
     */
    public DedupException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what failed; never a credential
     * @param cause the underlying exception, or null
     */
    public DedupException(String message, Throwable cause) {
        super(message, cause);
    }
}
