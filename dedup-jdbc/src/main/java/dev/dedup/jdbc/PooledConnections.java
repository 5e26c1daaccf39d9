package dev.dedup.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * One connection from the application's DataSource per operation, committed before it goes back. The store's timeout
 * bounds both waits whatever the pool and driver are set to: for a connection ({@link ConnectionWait}), and for each
 * reply on it (the connection's network timeout, for a server that stops answering mid-statement, where a query
 * timeout's cancel request cannot reach it either). Internal plumbing of dedup's SQL stores.
 */
public final class PooledConnections implements Connections {
    /** The network timeout's executor: the drivers apply it on the caller's thread. */
    private static final Executor IN_PLACE = Runnable::run;

    private final ConnectionWait connectionWait;
    private final int replyTimeoutMillis;
    private final SqlErrors errors;
    /** A lost reply is resent only in the first half of the timeout, so the whole call stays near the timeout. */
    private final long resendWithinNanos;
    /** Where the pool's connects go through one: what it last met, since a pool's timeout does not always say. */
    private final ReconnectingDataSource connects;

    /**
     * Runs work on connections from {@code dataSource}, each wait bounded by {@code timeout}.
     *
     * @param dataSource the application's pool, or the store's own
     * @param errors the store's error translation
     * @param timeout the store's operation timeout
     */
    public PooledConnections(DataSource dataSource, SqlErrors errors, Duration timeout) {
        this.connectionWait = ConnectionWait.of(dataSource, timeout);
        this.replyTimeoutMillis = (int) replyTimeout(timeout).toMillis();
        this.errors = errors;
        this.resendWithinNanos = timeout.toNanos() / 2;
        this.connects = ReconnectingDataSource.behind(dataSource);
    }

    /**
     * Checks a SQL store's operation timeout: 1 s (JDBC's query timeouts count whole seconds) to 10 min.
     *
     * @param timeout the timeout asked for
     * @return {@code timeout}
     * @throws IllegalArgumentException if {@code timeout} is out of range
     */
    public static Duration checkTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.compareTo(Duration.ofSeconds(1)) < 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("timeout must be in [PT1S, PT10M], but was " + timeout);
        }
        return timeout;
    }

    /**
     * Checks the batch size of a SQL store's {@code purgeExpired}: 1 to 100,000 rows in one call.
     *
     * @param batchSize the most rows to delete in one call
     * @return {@code batchSize}
     * @throws IllegalArgumentException if {@code batchSize} is out of range
     */
    public static int checkPurgeBatch(int batchSize) {
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be in [1, 100000], but was " + batchSize);
        }
        return batchSize;
    }

    /**
     * {@return {@code timeout} in whole seconds, rounded up, at least 1: what JDBC's query and login timeouts take}
     *
     * @param timeout a positive duration
     */
    public static int wholeSeconds(Duration timeout) {
        return (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
    }

    /**
     * {@return how long a connection waits for each reply: a second past the query timeout (whole seconds, rounded
     * up), so that the query timeout ends a long lock wait cleanly with the server's error, and the wait for a reply
     * only a server that stopped answering} The connection's network timeout during a call, and the socket timeout
     * of the drivers of stores opened by URI.
     *
     * @param timeout the store's operation timeout, at most 10 minutes
     */
    public static Duration replyTimeout(Duration timeout) {
        return Duration.ofSeconds(wholeSeconds(timeout) + 1L);
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
            boolean resend = afterLostReply != null && errors.isConnectionLoss(first.sql)
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
            connection = connectionWait.get();
        } catch (SQLException e) {
            throw errors.translate(operation, e, connects == null ? null : connects.lastFailure());
        }
        try (connection) {
            int poolsReplyTimeout = boundReplies(connection);
            try {
                return runCommitted(work, connection);
            } finally {
                restoreReplyTimeout(connection, poolsReplyTimeout);
            }
        } catch (SQLException e) {
            throw new WorkFailed(e);
        }
    }

    private static <T> T runCommitted(Work<T> work, Connection connection) throws SQLException {
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
    }

    /**
     * Lowers the connection's network timeout to the store's; {@return the one to restore, or -1 for none} A driver
     * without network timeouts leaves the replies to its own settings.
     */
    private int boundReplies(Connection connection) throws SQLException {
        try {
            int current = connection.getNetworkTimeout();
            if (current > 0 && current <= replyTimeoutMillis) {
                return -1;
            }
            connection.setNetworkTimeout(IN_PLACE, replyTimeoutMillis);
            return current;
        } catch (SQLFeatureNotSupportedException e) {
            return -1;
        }
    }

    /** The pool's setting again, for the pool's next borrower; a connection broken meanwhile is the pool's to drop. */
    private static void restoreReplyTimeout(Connection connection, int poolsReplyTimeout) {
        if (poolsReplyTimeout < 0) {
            return;
        }
        try {
            connection.setNetworkTimeout(IN_PLACE, poolsReplyTimeout);
        } catch (SQLException ignored) {
            // The connection broke: its close hands it back, and the pool discards it.
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
