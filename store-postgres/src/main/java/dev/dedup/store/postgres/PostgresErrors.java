package dev.dedup.store.postgres;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;

/** Maps driver errors to dedup's exceptions by SQLState class, never by message text. */
final class PostgresErrors {
    private static final String STORE = "PostgreSQL dedup store";

    private PostgresErrors() {}

    static DedupException translate(String operation, SQLException e, PostgresTable table) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        // 42P01 undefined table, 42703 undefined column, 3F000 undefined schema: the schema was never created.
        if (state.equals("42P01") || state.equals("42703") || state.equals("3F000")) {
            return new DedupConfigurationException("table " + table.display() + " is missing or lacks columns ("
                    + state + "); create it with PostgresDedupStore.createSchema() or this DDL:\n"
                    + table.createTable() + ";\n" + table.createExpiryIndex() + ";", e);
        }
        return isTransient(e, state)
                ? DedupStoreException.retryable(STORE, operation, e)
                : DedupStoreException.permanent(STORE, operation, e);
    }

    private static boolean isTransient(SQLException e, String state) {
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
