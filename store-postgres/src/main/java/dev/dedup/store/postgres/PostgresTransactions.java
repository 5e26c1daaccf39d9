package dev.dedup.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/**
 * The rule every operation that joins the caller's transaction applies: the transactional inbox
 * ({@link PostgresDedupStore#inTransaction}) and anything else that must commit or roll back with the caller's
 * business writes, such as an outbox append.
 */
public final class PostgresTransactions {
    private PostgresTransactions() {}

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
}
