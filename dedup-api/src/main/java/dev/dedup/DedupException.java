package dev.dedup;

/** Base of the exceptions dedup throws. A duplicate claim is never one of them: it is a {@link Duplicate} value. */
public class DedupException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DedupException(String message) {
        super(message);
    }

    public DedupException(String message, Throwable cause) {
        super(message, cause);
    }
}
