package dev.dedup.store.postgres;

import java.sql.Connection;

/** The caller's open transaction: statements run on it and are never committed, rolled back or closed here. */
final class CallerTransaction implements Connections {
    private final Connection connection;

    CallerTransaction(Connection connection) {
        this.connection = connection;
    }

    @Override
    public <T> T run(Work<T> work, String operation, PostgresTable table) {
        return Connections.translated(work, connection, operation, table);
    }
}
