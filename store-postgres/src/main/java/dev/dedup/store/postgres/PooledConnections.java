package dev.dedup.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** One connection from the application's DataSource per operation, committed before it goes back. */
final class PooledConnections implements Connections {
    private final DataSource dataSource;

    PooledConnections(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public <T> T run(Work<T> work, String operation, PostgresTable table) {
        try (Connection connection = dataSource.getConnection()) {
            if (connection.getAutoCommit()) {
                return Connections.translated(work, connection, operation, table);
            }
            // A pool configured without auto-commit: our statement is its own transaction all the same.
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(connection, e);
                throw e;
            }
        } catch (SQLException e) {
            throw PostgresErrors.translate(operation, e, table);
        }
    }

    private static void rollbackQuietly(Connection connection, Exception failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }
}
