package dev.dedup.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The caller's open transaction: statements run on it and are never committed, rolled back or closed here. A
 * broken connection is never resent: the transaction is gone with it.
 */
final class CallerTransaction implements Connections {
    private final Connection connection;
    private final PostgresErrors errors;

    CallerTransaction(Connection connection, PostgresErrors errors) {
        this.connection = connection;
        this.errors = errors;
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
