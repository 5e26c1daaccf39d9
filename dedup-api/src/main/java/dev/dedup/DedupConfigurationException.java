package dev.dedup;

/** A store cannot be opened or used as configured: bad URI, missing provider, missing table or index. */
public class DedupConfigurationException extends DedupException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception for a configuration that cannot work.
     *
     * @param message what is wrong and what is allowed instead; never a credential
     */
    public DedupConfigurationException(String message) {
        super(message);
    }

    /**
     * Creates the exception for a configuration that cannot work, found through {@code cause}.
     *
     * @param message what is wrong and what is allowed instead; never a credential
     * @param cause the driver's or parser's exception that showed the problem, or null
     */
    public DedupConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
