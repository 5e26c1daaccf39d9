package dev.dedup.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/**
 * The caller's open transaction: statements run on it and are never committed, rolled back or closed here. A
 * broken connection is never resent: the transaction is gone with it. Its {@link #requireOpen} is the rule every
 * operation that joins the caller's transaction applies: a SQL store's transactional inbox, an outbox append.
 */
public final class CallerTransaction implements Connections {
    private final Connection connection;
    private final SqlErrors errors;

    /**
     * Runs statements on {@code connection}, translating failures with {@code errors}.
     *
     * @param connection the caller's connection, checked with {@link #requireOpen}
     * @param errors the store's error translation
     */
    public CallerTransaction(Connection connection, SqlErrors errors) {
        this.connection = Objects.requireNonNull(connection, "connection");
        this.errors = errors;
    }

    /**
     * Runs a store's statements on the caller's open {@code transaction}, after checking it with
     * {@link #requireOpen}.
     *
     * @param transaction the caller's connection, auto-commit off
     * @param errors the store's error translation, also for a connection whose mode cannot be read
     * @return where the store's view of the transaction runs its statements
     * @throws IllegalArgumentException when {@code transaction} is in auto-commit mode
     */
    public static CallerTransaction of(Connection transaction, SqlErrors errors) {
        try {
            requireOpen(transaction, "inTransaction", "the claim");
        } catch (SQLException e) {
            throw errors.translate("inTransaction", e);
        }
        return new CallerTransaction(transaction, errors);
    }

    /**
     * Refuses a connection in auto-commit mode, where each statement commits on its own and would not share the fate
     * of the caller's business writes.
     *
     * @param transaction the caller's connection
     * @param operation the operation that needs the transaction, named in the error (such as {@code "inTransaction"})
     * @param what what would commit on its own, named in the error (such as {@code "the claim"})
     * @throws IllegalArgumentException when {@code transaction} is in auto-commit mode
     * @throws SQLException when the driver cannot tell (a closed connection)
     */
    public static void requireOpen(Connection transaction, String operation, String what) throws SQLException {
        Objects.requireNonNull(transaction, "transaction");
        if (transaction.getAutoCommit()) {
            throw new IllegalArgumentException(operation + " needs a connection with auto-commit off"
                    + " (setAutoCommit(false)), so that " + what + " commits or rolls back with your writes");
        }
    }

    @Override
    public <T> T run(Work<T> work, String operation) {
        try {
            return work.run(connection);
        } catch (SQLException e) {
            throw errors.translate(operation, e);
        }
    }
}
