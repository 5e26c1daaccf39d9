package dev.dedup.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupConfigurationException;
import dev.dedup.spi.StoreUri;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * The pool of a SQL store opened by URI. Every wait is bounded by the store's timeout: the pool's wait for a
 * connection here, and the driver's TCP connect, login and socket reads by the store when it makes the driver's
 * DataSource (without those a server that accepts and never answers holds a connect for ever). Connects go through a
 * {@link ReconnectingDataSource}, so the pool serves again within about 100 ms of the server's return, however long
 * the outage; idle connections are checked every 30 s (keepalive), so dead ones are found before a claim needs them.
 * Internal plumbing of dedup's SQL stores.
 */
public final class UriPool extends HikariDataSource {
    private static final long KEEPALIVE_MILLIS = 30_000; // HikariCP's minimum

    private final ReconnectingDataSource connects;
    private final String location;

    private UriPool(HikariConfig config, ReconnectingDataSource connects, String location) {
        super(config);
        this.connects = connects;
        this.location = location;
    }

    /**
     * The driver's own DataSource for a pool: the store's driver, its connect and read timeouts bounded.
     */
    @FunctionalInterface
    public interface Driver {
        /**
         * Makes the driver's DataSource.
         *
         * @param config the pool's settings: its JDBC URL, credentials and driver properties
         * @param timeout the store's operation timeout, which bounds the driver's TCP connect, login and reads
         * @return the driver's DataSource, not a pool
         */
        DataSource of(HikariConfig config, Duration timeout);
    }

    /**
     * Opens the pool of the store {@code uri} describes: its hosts, database, credentials and driver parameters,
     * {@code poolSize} connections through {@code driver}, every wait bounded by the URI's {@code timeout}.
     *
     * @param uri the checked store URI
     * @param jdbcScheme the JDBC URL's scheme for the driver that serves, such as {@code jdbc:postgresql}
     * @param expected the URI's expected form for the message, such as {@code postgresql://host:5432/database}
     * @param driver makes the driver's DataSource
     * @param worthReconnecting whether a failed connect may succeed on the next attempt (the store's rule)
     * @return the started pool; closing it stops the reconnects too
     */
    public static UriPool open(StoreUri uri, String jdbcScheme, String expected, Driver driver,
            Predicate<SQLException> worthReconnecting) {
        Duration timeout = uri.duration("timeout");
        HikariConfig config = config(uri);
        applyLocation(uri, config, jdbcScheme, expected);
        String location = config.getJdbcUrl().substring(jdbcScheme.length() + "://".length());
        ReconnectingDataSource connects = new ReconnectingDataSource(driver.of(config, timeout),
                Duration.ofMillis(100), worthReconnecting);
        // The driver has them now. HikariCP's debug log of its settings masks only a property named password, and
        // ignores the rest beside a DataSource: keyStorePassword and its kind must not stay to be logged.
        config.getDataSourceProperties().clear();
        config.setDataSource(connects);
        config.setJdbcUrl(null);
        config.setConnectionTimeout(Math.max(250, timeout.toMillis()));
        config.setValidationTimeout(Math.max(250, Math.min(timeout.toMillis() / 2, 5_000)));
        config.setKeepaliveTime(KEEPALIVE_MILLIS);
        return new UriPool(config, connects, location);
    }

    /** {@return where the pool connects, {@code host:port,.../database}: for messages, never credentials} */
    public String location() {
        return location;
    }

    /**
     * The pool settings every SQL store opened by URI starts from: named after the namespace, sized by the URI's
     * {@code poolSize}, and started without a connection, so that the application may start before its database
     * (the first operation fails instead).
     *
     * @param uri the checked store URI, which declares {@code poolSize}
     * @return the settings, to complete with {@link #applyLocation}
     */
    static HikariConfig config(StoreUri uri) {
        HikariConfig pool = new HikariConfig();
        pool.setPoolName("dedup-" + uri.namespace());
        pool.setMaximumPoolSize(uri.integer("poolSize"));
        pool.setInitializationFailTimeout(-1);
        return pool;
    }

    /**
     * Turns a store URI, in either form ({@code scheme://...} or {@code jdbc:scheme://...}), into the pool's JDBC URL
     * (hosts and database only) plus the credentials and driver properties, set as values rather than spliced into the
     * URL, so nothing needs encoding twice.
     *
     * @param uri the checked store URI
     * @param pool the pool's settings to fill in
     * @param jdbcScheme the JDBC URL's scheme for the driver that serves, such as {@code jdbc:postgresql}
     * @param expected the URI's expected form for the message, such as {@code postgresql://host:5432/database}
     * @throws DedupConfigurationException when the URI has no {@code //host} part
     */
    public static void applyLocation(StoreUri uri, HikariConfig pool, String jdbcScheme, String expected) {
        if (!uri.location().startsWith("//")) {
            throw new DedupConfigurationException("URI " + uri.redacted() + " must look like " + expected
                    + " or jdbc:" + expected);
        }
        StringJoiner hosts = new StringJoiner(",");
        uri.hosts().forEach(host -> hosts.add(host.toString()));
        uri.user().ifPresent(pool::setUsername);
        uri.password().ifPresent(pool::setPassword);
        for (Map.Entry<String, String> parameter : uri.driverParameters()) {
            switch (parameter.getKey()) {
                case "user" -> pool.setUsername(parameter.getValue());
                case "password" -> pool.setPassword(parameter.getValue());
                default -> pool.addDataSourceProperty(parameter.getKey(), parameter.getValue());
            }
        }
        pool.setJdbcUrl(jdbcScheme + "://" + hosts + "/" + uri.path().orElse(""));
    }

    /**
     * Closes a pool whose store failed to open without making the caller wait: HikariCP's shutdown waits up to the
     * login timeout for a connect still in flight (a server that accepts and never answers), which would double the
     * time to report the failure.
     */
    public void closeInBackground() {
        Thread closer = new Thread(this::close, "dedup-close-failed-pool");
        closer.setDaemon(true);
        closer.start();
    }

    @Override
    public void close() {
        connects.close(); // first, so that a connect retrying in the pool's thread lets the pool shut down
        super.close();
    }
}
