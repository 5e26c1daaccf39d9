package dev.dedup.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * Takes a connection from a {@link DataSource} within the store's timeout, whatever the pool's own wait. An
 * application's pool is configured for the application: Spring Boot's HikariCP waits 30 s for a connection, so in an
 * outage every store call (and every request or health check behind it) would wait 30 s before failing.
 *
 * <p>HikariCP's pool takes a wait of the caller's choosing. Any other pool (and a HikariCP pool not started yet) is
 * asked on a thread of its own while the caller waits at most the timeout; a connection that arrives after the caller
 * gave up goes straight back to the pool. At most {@link #WAITS_IN_FLIGHT} such asks run at once per store: past
 * that (a pool or server that never answers), a call fails at once, rather than adding a thread and a waiter to the
 * pool's queue for each call. The thread carries none of the caller's thread-local state: a DataSource that routes
 * by it (an {@code AbstractRoutingDataSource}) must be given to the store as the pool it routes to.
 */
abstract class ConnectionWait {
    /** Daemon threads, made as needed: only waits on other pools use them, and only for as long as those last. */
    private static final ExecutorService WAITERS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "dedup-jdbc-connection-wait");
        thread.setDaemon(true);
        return thread;
    });

    /** Asks in flight on other pools, per store: a bound on threads and on abandoned waiters in the pool's queue. */
    static final int WAITS_IN_FLIGHT = 32;

    /** The connection, or an {@link SQLException} once the wait is over. */
    abstract Connection get() throws SQLException;

    static ConnectionWait of(DataSource dataSource, Duration timeout) {
        long millis = Math.max(1, timeout.toMillis());
        if (dataSource instanceof HikariDataSource hikari) {
            return hikari.getConnectionTimeout() > 0 && hikari.getConnectionTimeout() <= millis
                    ? new Direct(dataSource)
                    : new Hikari(hikari, millis);
        }
        return new OnWaiterThread(dataSource, millis);
    }

    /** The pool's own wait is no longer than the store's (a store opened by URI configures it so). */
    private static final class Direct extends ConnectionWait {
        private final DataSource dataSource;

        Direct(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        @Override
        Connection get() throws SQLException {
            return dataSource.getConnection();
        }
    }

    /** HikariCP's pool, asked with the store's wait; before the pool starts, the first call starts it. */
    private static final class Hikari extends ConnectionWait {
        private final HikariDataSource dataSource;
        private final long millis;
        private final OnWaiterThread untilStarted;

        Hikari(HikariDataSource dataSource, long millis) {
            this.dataSource = dataSource;
            this.millis = millis;
            this.untilStarted = new OnWaiterThread(dataSource, millis);
        }

        @Override
        Connection get() throws SQLException {
            // The pool is the data source's MXBean once started; HikariCP 4 to 7 hand out the pool itself.
            if (!dataSource.isClosed() && dataSource.getHikariPoolMXBean() instanceof HikariPool pool) {
                return pool.getConnection(millis);
            }
            return untilStarted.get();
        }
    }

    /** Any pool: its {@code getConnection()} on a waiter thread, the caller waiting at most the timeout. */
    private static final class OnWaiterThread extends ConnectionWait {
        private final DataSource dataSource;
        private final long millis;
        private final Semaphore inFlight = new Semaphore(WAITS_IN_FLIGHT);

        OnWaiterThread(DataSource dataSource, long millis) {
            this.dataSource = dataSource;
            this.millis = millis;
        }

        @Override
        Connection get() throws SQLException {
            if (!inFlight.tryAcquire()) {
                throw new SQLTransientConnectionException(WAITS_IN_FLIGHT + " earlier waits for a connection from the"
                        + " DataSource have not ended yet (the pool or the server is not answering)", "08001");
            }
            CompletableFuture<Connection> connecting;
            try {
                connecting = CompletableFuture.supplyAsync(this::connect, WAITERS);
            } catch (RuntimeException e) {
                inFlight.release();
                throw e;
            }
            connecting.whenComplete((connection, failure) -> inFlight.release());
            try {
                return connecting.get(millis, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause() instanceof CompletionException wrapped ? wrapped.getCause() : e.getCause();
                throw cause instanceof SQLException sql
                        ? sql
                        : new SQLException("the DataSource failed to give a connection", "08001", cause);
            } catch (TimeoutException e) {
                giveBackWhenItComes(connecting);
                throw new SQLTransientConnectionException("no connection from the DataSource within " + millis
                        + " ms (the store's timeout), whatever the pool's own wait", "08001");
            } catch (InterruptedException e) {
                giveBackWhenItComes(connecting);
                Thread.currentThread().interrupt();
                throw new SQLTransientConnectionException("interrupted while waiting for a connection", "08001", e);
            }
        }

        private Connection connect() {
            try {
                return dataSource.getConnection();
            } catch (SQLException e) {
                throw new CompletionException(e);
            }
        }

        private static void giveBackWhenItComes(CompletableFuture<Connection> connecting) {
            connecting.thenAccept(late -> {
                try {
                    late.close();
                } catch (SQLException ignored) {
                    // Closing only returns it to the pool; a broken one is the pool's to drop.
                }
            });
        }
    }
}
