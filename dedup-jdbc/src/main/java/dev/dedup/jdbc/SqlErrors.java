package dev.dedup.jdbc;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.sql.SQLException;

/**
 * Maps a SQL store's driver errors to dedup's exceptions by SQLState and vendor code, never by message text. A pool's
 * own exception ("connection not available") is unwrapped to the driver's, so the message says what went wrong,
 * where. Each store says what its server's codes mean; the message, the unwrapping and the rule that a missing
 * schema is a configuration error are the same for all. Internal plumbing of dedup's SQL stores.
 */
public abstract class SqlErrors {
    private final String store;
    /** {@code host:port/database}, or null where the DataSource does not say; never credentials. */
    private final String location;

    /**
     * Names the store in its messages.
     *
     * @param store the store's name, such as {@code "PostgreSQL dedup store"}
     * @param location {@code host:port/database}, or null where unknown; never credentials
     */
    protected SqlErrors(String store, String location) {
        this.store = store;
        this.location = location;
    }

    /**
     * Translates {@code e}, raised by {@code operation}.
     *
     * @param operation the store operation, such as {@code "claim"}
     * @param e the driver's or pool's exception
     * @return a {@link DedupConfigurationException} for a missing or outdated schema, otherwise a
     *     {@link DedupStoreException} saying whether a retry may succeed
     */
    public final DedupException translate(String operation, SQLException e) {
        return translate(operation, e, null);
    }

    /**
     * As {@link #translate(String, SQLException)}, with the connect failure behind a pool's timeout, if known.
     *
     * @param operation the store operation, such as {@code "claim"}
     * @param e the driver's or pool's exception
     * @param connectFailure the last failed connect behind the pool, or null
     * @return the translated exception
     */
    public final DedupException translate(String operation, SQLException e, SQLException connectFailure) {
        SQLException root = rootOf(e);
        if (root == e && connectFailure != null && stateOf(e).isEmpty()) {
            root = rootOf(connectFailure);
        }
        DedupConfigurationException schema = schemaProblem(root);
        if (schema != null) {
            return schema;
        }
        boolean retryable = isRetryable(root);
        DedupStoreException translated = new DedupStoreException(store + (location == null ? "" : " at " + location)
                + " " + operation + " failed" + (retryable ? "" : " permanently") + ": " + describe(root)
                + (root == e ? "" : " (" + e.getMessage() + ")"), root, retryable);
        if (root != e) {
            translated.addSuppressed(e);
        }
        return translated;
    }

    /**
     * {@return the error as a configuration error when it says the table is missing or not as the store needs it,
     * naming the fix; null otherwise}
     *
     * @param root the driver's exception, unwrapped
     */
    protected abstract DedupConfigurationException schemaProblem(SQLException root);

    /**
     * {@return whether the same call may succeed later: a lost connection, a timeout, a deadlock; not bad credentials}
     *
     * @param root the driver's exception, unwrapped
     */
    protected abstract boolean isRetryable(SQLException root);

    /**
     * {@return whether the connection broke while a statement was out, so the server may or may not have run it: a
     * SQLState of class 08, as both PostgreSQL's and MySQL's drivers report it}
     *
     * @param e the driver's or pool's exception
     */
    public boolean isConnectionLoss(SQLException e) {
        return stateOf(rootOf(e)).startsWith("08");
    }

    /**
     * {@return the driver's exception under a pool's wrapper: the deepest SQLException in the chain that has a
     * SQLState}
     *
     * @param e the exception as caught
     */
    public static SQLException rootOf(SQLException e) {
        SQLException root = e;
        for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                root = sql;
            }
        }
        return root;
    }

    /**
     * {@return the exception's SQLState, empty when it has none}
     *
     * @param e an exception
     */
    public static String stateOf(SQLException e) {
        return e.getSQLState() == null ? "" : e.getSQLState();
    }

    private static String describe(SQLException root) {
        StringBuilder text = new StringBuilder(root.getClass().getSimpleName());
        if (root.getSQLState() != null) {
            text.append(" [").append(root.getSQLState()).append(']');
        }
        text.append(' ').append(root.getMessage());
        Throwable io = root.getCause();
        if (io != null && !(io instanceof SQLException)) {
            text.append(" (").append(io.getClass().getSimpleName()).append(": ").append(io.getMessage()).append(')');
        }
        return text.toString();
    }
}
