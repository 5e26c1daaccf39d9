package dev.dedup.store.postgres;

import java.time.Duration;
import javax.sql.DataSource;

/**
 * The DataSource to put behind a connection pool so that it recovers as soon as its PostgreSQL server is back. A pool
 * backs off between failed connects (HikariCP up to 5 s, hard-coded), so after a long outage its first connection can
 * come seconds after the server's return. Behind this, a connect that fails because the server is down, starting or
 * full is retried every {@code retryInterval} (100 ms by default) until it succeeds, so the pool never sees those
 * failures and never backs off; the pool's own timeout still bounds how long a caller waits. Authentication and
 * unknown-database errors are not retried. {@link #close()} it together with the pool.
 *
 * <pre>{@code
 * PGSimpleDataSource driver = new PGSimpleDataSource();
 * driver.setUrl("jdbc:postgresql://db:5432/app");
 * ReconnectingDataSource connects = new ReconnectingDataSource(driver);
 * HikariConfig config = new HikariConfig();
 * config.setDataSource(connects);
 * }</pre>
 */
public final class ReconnectingDataSource extends dev.dedup.jdbc.ReconnectingDataSource {
    /**
     * Wraps {@code driver}, retrying a failed connect every 100 ms.
     *
     * @param driver the driver's own DataSource, such as {@code PGSimpleDataSource}: not a pool
     */
    public ReconnectingDataSource(DataSource driver) {
        this(driver, Duration.ofMillis(100));
    }

    /**
     * Wraps {@code driver}, retrying a failed connect every {@code retryInterval}.
     *
     * @param driver the driver's own DataSource, such as {@code PGSimpleDataSource}: not a pool
     * @param retryInterval the pause between connect attempts, more than 0 and at most 60 s
     * @throws IllegalArgumentException if {@code retryInterval} is out of range
     */
    public ReconnectingDataSource(DataSource driver, Duration retryInterval) {
        super(driver, retryInterval, PostgresErrors::worthReconnecting);
    }
}
