package dev.dedup.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;

/** Where a store's statements run: a pooled connection per operation, or the caller's open transaction. */
interface Connections {

    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Runs {@code work}, translating driver errors into dedup's exceptions for {@code operation}. */
    <T> T run(Work<T> work, String operation, PostgresTable table);

    static <T> T translated(Work<T> work, Connection connection, String operation, PostgresTable table) {
        try {
            return work.run(connection);
        } catch (SQLException e) {
            throw PostgresErrors.translate(operation, e, table);
        }
    }
}
