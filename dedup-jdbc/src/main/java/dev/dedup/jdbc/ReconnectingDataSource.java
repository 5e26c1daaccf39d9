package dev.dedup.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The DataSource to put behind a connection pool so that it recovers as soon as its server is back. A pool backs off
 * between failed connects (HikariCP up to 5 s, hard-coded), so after a long outage its first connection can come
 * seconds after the server's return. Behind this, a connect that fails in a way the store's rule calls worth
 * retrying (the server is down, starting or full) is retried every {@code retryInterval} until it succeeds, so the
 * pool never sees those failures and never backs off; the pool's own timeout still bounds how long a caller waits.
 * Authentication and unknown-database errors are not retried. {@link #close()} it together with the pool.
 *
 * <p>The stores opened by URI put one behind their pools. store-postgres also offers one with PostgreSQL's rule for
 * an application's own pool ({@code dev.dedup.store.postgres.ReconnectingDataSource}); this base is internal plumbing.
 */
public class ReconnectingDataSource implements DataSource, AutoCloseable {
    private final DataSource driver;
    private final long retryMillis;
    private final Predicate<SQLException> worthRetrying;
    private volatile boolean closed;
    private volatile SQLException lastFailure;
    /** Threads inside a connect, interrupted by close() so a pool shutting down does not wait out a login. */
    private final Set<Thread> connecting = ConcurrentHashMap.newKeySet();

    /**
     * Wraps {@code driver}, retrying a failed connect every {@code retryInterval} while {@code worthRetrying} says so.
     *
     * @param driver the driver's own DataSource, not a pool
     * @param retryInterval the pause between connect attempts, more than 0 and at most 60 s
     * @param worthRetrying whether a failed connect may succeed on the next attempt
     * @throws IllegalArgumentException if {@code retryInterval} is out of range
     */
    public ReconnectingDataSource(DataSource driver, Duration retryInterval, Predicate<SQLException> worthRetrying) {
        this.driver = Objects.requireNonNull(driver, "driver");
        if (retryInterval.isNegative() || retryInterval.isZero() || retryInterval.toSeconds() > 60) {
            throw new IllegalArgumentException("retryInterval must be in (0, 60 s], but was " + retryInterval);
        }
        this.retryMillis = retryInterval.toMillis();
        this.worthRetrying = Objects.requireNonNull(worthRetrying, "worthRetrying");
    }

    /**
     * {@return the instance behind {@code dataSource} (itself, or the one a pool wraps), or null}
     *
     * @param dataSource a DataSource, possibly a pool over one of these
     */
    public static ReconnectingDataSource behind(DataSource dataSource) {
        try {
            return dataSource.isWrapperFor(ReconnectingDataSource.class)
                    ? dataSource.unwrap(ReconnectingDataSource.class) : null;
        } catch (SQLException | RuntimeException e) {
            return null;
        }
    }

    /**
     * {@return the failure of the last connect, or null after a success: what a caller waiting on the pool ran into}
     */
    public final SQLException lastFailure() {
        return lastFailure;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return connect(driver::getConnection);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return connect(() -> driver.getConnection(username, password));
    }

    private interface Connect {
        Connection open() throws SQLException;
    }

    private Connection connect(Connect connect) throws SQLException {
        Thread current = Thread.currentThread();
        connecting.add(current);
        try {
            return retrying(connect);
        } finally {
            connecting.remove(current);
        }
    }

    private Connection retrying(Connect connect) throws SQLException {
        while (true) {
            try {
                Connection connection = connect.open();
                lastFailure = null;
                return connection;
            } catch (SQLException e) {
                lastFailure = e;
                if (closed || !worthRetrying.test(e)) {
                    throw e;
                }
                try {
                    Thread.sleep(retryMillis);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** Stops retrying: a connect in progress is interrupted and ends with its failure. */
    @Override
    public void close() {
        closed = true;
        connecting.forEach(Thread::interrupt);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return driver.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        driver.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        driver.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return driver.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return driver.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : driver.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || driver.isWrapperFor(iface);
    }
}
