package dev.dedup.store.postgres;

import dev.dedup.DedupConfigurationException;
import dev.dedup.jdbc.SqlErrors;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;

/** What PostgreSQL's SQLStates mean to the store; the message and the unwrapping are {@link SqlErrors}'. */
final class PostgresErrors extends SqlErrors {
    private final PostgresTable table;

    PostgresErrors(PostgresTable table, String location) {
        super("PostgreSQL dedup store", location);
        this.table = table;
    }

    @Override
    protected DedupConfigurationException schemaProblem(SQLException root) {
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
        return null;
    }

    /** A connect failure that a later attempt may not meet: the server is down, starting, or full. */
    static boolean worthReconnecting(SQLException e) {
        String state = stateOf(rootOf(e));
        return state.startsWith("08") || state.startsWith("57P") || state.equals("53300");
    }

    @Override
    protected boolean isRetryable(SQLException e) {
        String state = stateOf(e);
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
