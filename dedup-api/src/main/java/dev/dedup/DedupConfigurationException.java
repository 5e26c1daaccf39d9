package dev.dedup;

/** A store cannot be opened or used as configured: bad URI, missing provider, missing table or index. */
public class DedupConfigurationException extends DedupException {
    private static final long serialVersionUID = 1L;

    public DedupConfigurationException(String message) {
        super(message);
    }

    public DedupConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
