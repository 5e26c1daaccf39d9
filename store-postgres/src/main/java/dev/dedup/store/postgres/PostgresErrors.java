package dev.dedup.store.postgres;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;

/**
 * Maps driver errors to dedup's exceptions by SQLState, never by message text. A pool's own exception ("connection
 * not available") is unwrapped to the driver's, so the message says what went wrong, where.
 */
final class PostgresErrors {
    private static final String STORE = "PostgreSQL dedup store";

    private final PostgresTable table;
    /** {@code host:port/database}, or null where the DataSource does not say; never credentials. */
    private final String location;

    PostgresErrors(PostgresTable table, String location) {
        this.table = table;
        this.location = location;
    }

    DedupException translate(String operation, SQLException e) {
        return translate(operation, e, null);
    }

    /** As {@link #translate(String, SQLException)}, with the connect failure behind a pool's timeout, if known. */
    DedupException translate(String operation, SQLException e, SQLException connectFailure) {
        SQLException root = rootOf(e);
        if (root == e && connectFailure != null && stateOf(e).isEmpty()) {
            root = rootOf(connectFailure);
        }
        String state = stateOf(root);
        // 42P01 undefined table, 42703 undefined column, 3F000 undefined schema: the schema was never created.
        if (state.equals("42P01") || state.equals("42703") || state.equals("3F000")) {
            return new DedupConfigurationException("table " + table.display() + " is missing or lacks columns ("
                    + state + "); create it with PostgresDedupStore.createSchema() or this DDL:\n"
                    + table.createTable() + ";\n" + table.createExpiryIndex() + ";", root);
        }
        if (state.equals("23514")) { // check_violation: a state CHECK made before FAILED existed
            return new DedupConfigurationException("table " + table.display() + " rejected a state (" + state
                    + "); its CHECK predates FAILED: run PostgresDedupStore.createSchema() to upgrade it", root);
        }
        boolean retryable = isRetryable(root, state);
        DedupStoreException translated = new DedupStoreException(STORE + (location == null ? "" : " at " + location)
                + " " + operation + " failed" + (retryable ? "" : " permanently") + ": " + describe(root)
                + (root == e ? "" : " (" + e.getMessage() + ")"), root, retryable);
        if (root != e) {
            translated.addSuppressed(e);
        }
        return translated;
    }

    /** The connection broke while a statement was out: the server may or may not have run it. */
    static boolean isConnectionLoss(SQLException e) {
        return stateOf(rootOf(e)).startsWith("08");
    }

    /** A connect failure that a later attempt may not meet: the server is down, starting, or full. */
    static boolean isWorthReconnecting(SQLException e) {
        String state = stateOf(rootOf(e));
        return state.startsWith("08") || state.startsWith("57P") || state.equals("53300");
    }

    /** The driver's exception under a pool's wrapper: the deepest SQLException in the chain that has a SQLState. */
    private static SQLException rootOf(SQLException e) {
        SQLException root = e;
        for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                root = sql;
            }
        }
        return root;
    }

    private static String stateOf(SQLException e) {
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

    private static boolean isRetryable(SQLException e, String state) {
        // 28xxx invalid authorization, 3D000 unknown database: the same connect fails until the configuration changes.
        if (state.startsWith("28") || state.equals("3D000")) {
            return false;
        }
        if (e instanceof SQLTransientException || e instanceof SQLRecoverableException
                || e instanceof SQLNonTransientConnectionException) {
            return true;
        }
        return state.isEmpty()
                || state.startsWith("08") // connection exception
                || state.startsWith("40") // serialization failure, deadlock
                || state.startsWith("53") // insufficient resources
                || state.startsWith("57") // operator intervention: shutdown, query canceled (timeout)
                || state.equals("55P03"); // lock not available
    }
}
