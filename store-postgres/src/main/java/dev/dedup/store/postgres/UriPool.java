package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupConfigurationException;
import java.sql.SQLException;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The pool of a store opened by URI. Every wait is bounded by the store's timeout: the pool's wait for a connection,
 * and the driver's TCP connect, login and socket reads (without those a server that accepts and never answers holds
 * a connect for ever). Connects go through a {@link ReconnectingDataSource}, so the pool serves again within about
 * 100 ms of the server's return, however long the outage; idle connections are checked every 30 s (keepalive), so
 * dead ones are found before a claim needs them.
 */
final class UriPool extends HikariDataSource {
    private static final long KEEPALIVE_MILLIS = 30_000; // HikariCP's minimum

    private final ReconnectingDataSource connects;

    private UriPool(HikariConfig config, ReconnectingDataSource connects) {
        super(config);
        this.connects = connects;
    }

    /**
     * Opens the pool {@code config} describes (its JDBC URL, credentials and driver properties), with waits bounded
     * by {@code timeout}.
     */
    static UriPool open(HikariConfig config, Duration timeout) {
        PGSimpleDataSource driver = new PGSimpleDataSource();
        driver.setUrl(config.getJdbcUrl());
        // The pool hands connects to the driver's DataSource below, which would drop these: give them to the driver.
        for (String name : config.getDataSourceProperties().stringPropertyNames()) {
            try {
                driver.setProperty(name, config.getDataSourceProperties().getProperty(name));
            } catch (SQLException e) {
                throw new DedupConfigurationException("the PostgreSQL driver does not accept the setting " + name
                        + ": " + e.getMessage(), e);
            }
        }
        int seconds = (int) Math.max(1, (timeout.toMillis() + 999) / 1000); // the driver counts whole seconds
        driver.setConnectTimeout(atMost(driver.getConnectTimeout(), seconds));
        driver.setLoginTimeout(atMost(driver.getLoginTimeout(), seconds));
        driver.setSocketTimeout(atMost(driver.getSocketTimeout(), seconds));
        ReconnectingDataSource connects = new ReconnectingDataSource(driver);
        config.setDataSource(connects);
        config.setJdbcUrl(null);
        config.setConnectionTimeout(Math.max(250, timeout.toMillis()));
        config.setValidationTimeout(Math.max(250, Math.min(timeout.toMillis() / 2, 5_000)));
        config.setKeepaliveTime(KEEPALIVE_MILLIS);
        return new UriPool(config, connects);
    }

    /** The driver's "0 = no limit" becomes the limit. */
    private static int atMost(int current, int limit) {
        return current <= 0 ? limit : Math.min(current, limit);
    }

    @Override
    public void close() {
        connects.close(); // first, so that a connect retrying in the pool's thread lets the pool shut down
        super.close();
    }
}
