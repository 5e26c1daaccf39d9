package dev.dedup.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;

/** One connection from the application's DataSource per operation, committed before it goes back. */
final class PooledConnections implements Connections {
    private final DataSource dataSource;
    private final PostgresErrors errors;
    /** A lost reply is resent only in the first half of the timeout, so the whole call stays near the timeout. */
    private final long resendWithinNanos;
    /** Where the pool's connects go through one: what it last met, since a pool's timeout does not always say. */
    private final ReconnectingDataSource connects;

    PooledConnections(DataSource dataSource, PostgresErrors errors, Duration timeout) {
        this.dataSource = dataSource;
        this.errors = errors;
        this.resendWithinNanos = timeout.toNanos() / 2;
        this.connects = ReconnectingDataSource.behind(dataSource);
    }

    @Override
    public <T> T run(Work<T> work, String operation) {
        return runResending(work, null, operation);
    }

    @Override
    public <T> T runResending(Work<T> work, Work<T> afterLostReply, String operation) {
        long started = System.nanoTime();
        try {
            return once(work, operation);
        } catch (WorkFailed first) {
            boolean resend = afterLostReply != null && PostgresErrors.isConnectionLoss(first.sql)
                    && System.nanoTime() - started < resendWithinNanos;
            if (!resend) {
                throw errors.translate(operation, first.sql);
            }
            try {
                return once(afterLostReply, operation);
            } catch (WorkFailed second) {
                RuntimeException failure = errors.translate(operation, second.sql);
                failure.addSuppressed(first.sql);
                throw failure;
            }
        }
    }

    /** Runs {@code work} on a connection; a failure to get one is translated at once (nothing was sent). */
    private <T> T once(Work<T> work, String operation) throws WorkFailed {
        Connection connection;
        try {
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            throw errors.translate(operation, e, connects == null ? null : connects.lastFailure());
        }
        try (connection) {
            if (connection.getAutoCommit()) {
                return work.run(connection);
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
            throw new WorkFailed(e);
        }
    }

    private static void rollbackQuietly(Connection connection, Exception failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /** A statement failed after the connection was obtained: it may have reached the server. */
    private static final class WorkFailed extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient SQLException sql;

        WorkFailed(SQLException sql) {
            super(sql);
            this.sql = sql;
        }
    }
}
