package dev.dedup.store.mysql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.util.DriverDataSource;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.jdbc.PooledConnections;
import dev.dedup.jdbc.UriPool;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.Spelling;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.sql.Driver;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * Opens {@code mysql://user:password@host:3306/db?table=dedup_claims&namespace=orders}, and the same as
 * {@code mariadb://}, {@code jdbc:mysql://} and {@code jdbc:mariadb://}. dedup's own parameters are {@code table},
 * {@code namespace}, {@code poolSize} (default 10, in [1, 200]), {@code timeout} (default 5s, in [1s, 10m]) and
 * {@code createSchema} (default false); the driver parameters listed in {@link #DRIVER_PARAMETERS} are passed to the
 * driver, any other name is refused. Whatever the scheme, MariaDB Connector/J serves when it is on the class path
 * (it is this module's dependency), else MySQL Connector/J: the scheme names the server family, not the driver.
 */
public final class MysqlDedupStoreProvider implements DedupStoreProvider {
    /**
     * The drivers' connection properties a URI may set (MariaDB Connector/J 3.5's names, and MySQL Connector/J's
     * where they differ); each URI may set only those of the driver that serves it. Left out on purpose: ones that change what the store's
     * statements report or run ({@code autocommit}, {@code useAffectedRows}, {@code rewriteBatchedStatements},
     * {@code useBulkStmts}, {@code allowMultiQueries}, {@code allowLocalInfile}, {@code permitMysqlScheme}).
     */
    static final Set<String> DRIVER_PARAMETERS = Set.of("user", "password", "connectTimeout", "socketTimeout",
            "sslMode", "serverSslCert", "keyStore", "keyStorePassword", "keyStoreType", "trustStore",
            "trustStorePassword", "trustStoreType", "enabledSslProtocolSuites", "enabledSslCipherSuites",
            "allowPublicKeyRetrieval", "serverRsaPublicKeyFile", "tcpKeepAlive", "tcpAbortiveClose",
            "localSocketAddress", "connectionAttributes", "sessionVariables", "restrictedAuth", "credentialType",
            "useCompression", "transactionIsolation", "useServerPrepStmts", "cachePrepStmts", "prepStmtCacheSize",
            "galeraAllowedState", "retriesAllDown", "socketFactory", "servicePrincipalName", "jaasApplicationName",
            "useSSL", "trustCertificateKeyStoreUrl", "trustCertificateKeyStorePassword",
            "clientCertificateKeyStoreUrl", "clientCertificateKeyStorePassword", "connectionTimeZone");

    private static final UriParameters PARAMETERS = UriParameters.builder()
            .text("table", MysqlTable.DEFAULT_NAME)
            .integer("poolSize", 10, 1, 200)
            .duration("timeout", Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofMinutes(10))
            .bool("createSchema", false)
            .driver(DRIVER_PARAMETERS.toArray(String[]::new))
            .build();

    /** The driver that serves, by the JDBC URL scheme it takes without further settings, MariaDB's first. */
    private static final String[][] DRIVERS = {
        {"org.mariadb.jdbc.Driver", "jdbc:mariadb", "MariaDB Connector/J"},
        {"com.mysql.cj.jdbc.Driver", "jdbc:mysql", "MySQL Connector/J"},
    };

    @Override
    public Set<String> schemes() {
        return Set.of("mysql", "mariadb", "jdbc:mysql", "jdbc:mariadb");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-mysql";
    }

    @Override
    public UriParameters parameters() {
        return PARAMETERS;
    }

    @Override
    public DedupStore open(StoreUri uri) {
        String[] driver = driver();
        checkServingDriverKnows(uri, driver);
        UriPool pool = UriPool.open(uri, driver[1], "mysql://host:3306/database",
                (config, timeout) -> driverSource(config, driver[0], timeout), MysqlErrors::worthReconnecting);
        return MysqlDedupStore.builder(pool).location(pool.location()).buildOpenedBy(uri, pool);
    }

    private static String[] driver() {
        for (String[] driver : DRIVERS) {
            try {
                Class.forName(driver[0], false, MysqlDedupStoreProvider.class.getClassLoader());
                return driver;
            } catch (ClassNotFoundException e) {
                // the next one, then
            }
        }
        throw new DedupConfigurationException("no JDBC driver for MySQL or MariaDB on the class path: add"
                + " org.mariadb.jdbc:mariadb-java-client (or com.mysql:mysql-connector-j)");
    }

    /**
     * Each driver parameter must be a setting of the driver that serves: MariaDB Connector/J ignores names it does
     * not know, so a MySQL Connector/J setting (a trust store, a time zone) would silently do nothing. The driver's
     * own list ({@link Driver#getPropertyInfo}) says what it knows.
     */
    private static void checkServingDriverKnows(StoreUri uri, String[] driver) {
        Set<String> known = new TreeSet<>();
        try {
            Driver serving = (Driver) Class.forName(driver[0], true, MysqlDedupStoreProvider.class.getClassLoader())
                    .getDeclaredConstructor().newInstance();
            for (DriverPropertyInfo property : serving.getPropertyInfo(driver[1] + "://localhost/", new Properties())) {
                known.add(property.name);
            }
        } catch (ReflectiveOperationException | SQLException e) {
            throw new DedupConfigurationException("cannot list the settings of " + driver[2] + ": " + e, e);
        }
        known.addAll(Set.of("user", "password"));
        known.retainAll(DRIVER_PARAMETERS);
        for (Map.Entry<String, String> parameter : uri.driverParameters()) {
            if (!known.contains(parameter.getKey())) {
                throw new DedupConfigurationException("parameter '" + parameter.getKey() + "' in " + uri.redacted()
                        + " is not a setting of " + driver[2] + ", which serves this store and would ignore it."
                        + Spelling.didYouMean(parameter.getKey(), known) + " Allowed with " + driver[2] + ": "
                        + known + ".");
            }
        }
    }

    /**
     * The driver's DataSource for the pool's URL and properties, its TCP connect bounded by the store's timeout and
     * its socket reads by {@link PooledConnections#replyTimeout} (both drivers take these two properties, in
     * milliseconds) unless the URI sets them lower.
     */
    private static DriverDataSource driverSource(HikariConfig pool, String driverClass, Duration timeout) {
        Properties properties = new Properties();
        properties.putAll(pool.getDataSourceProperties());
        atMost(properties, "connectTimeout", Math.max(1_000, timeout.toMillis()));
        atMost(properties, "socketTimeout", PooledConnections.replyTimeout(timeout).toMillis());
        return new DriverDataSource(pool.getJdbcUrl(), driverClass, properties, pool.getUsername(),
                pool.getPassword());
    }

    /** Sets the driver property {@code name} to {@code millis}, or keeps the URI's if lower (0 means no limit). */
    private static void atMost(Properties properties, String name, long millis) {
        long given = parseOrZero(properties.getProperty(name));
        properties.setProperty(name, Long.toString(given <= 0 ? millis : Math.min(given, millis)));
    }

    private static long parseOrZero(String millis) {
        try {
            return millis == null ? 0 : Long.parseLong(millis.trim());
        } catch (NumberFormatException e) {
            throw new DedupConfigurationException("connectTimeout and socketTimeout are milliseconds, but one was '"
                    + millis + "'", e);
        }
    }
}
