package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.jdbc.PooledConnections;
import dev.dedup.jdbc.UriPool;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Set;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Opens {@code postgresql://user:password@host:5432/db?table=dedup_claims&namespace=orders} and
 * {@code jdbc:postgresql://host:5432/db?user=app&table=...}. dedup's own parameters are {@code table},
 * {@code namespace}, {@code poolSize} (default 10, in [1, 200]), {@code timeout} (default 5s, in [1s, 10m]) and
 * {@code createSchema} (default false); the PostgreSQL JDBC driver's parameters listed in {@link #DRIVER_PARAMETERS}
 * are passed to it, any other name is refused.
 */
public final class PostgresDedupStoreProvider implements DedupStoreProvider {
    /**
     * The JDBC driver's connection properties a URI may set (pgjdbc 42.7's names, case as the driver reads them).
     * Left out on purpose: ones that would break the store ({@code readOnly}, {@code replication}, {@code autosave})
     * and ones the URI itself sets ({@code PGHOST}, {@code PGPORT}, {@code PGDBNAME}).
     */
    static final Set<String> DRIVER_PARAMETERS = Set.of("user", "password", "options", "currentSchema",
            "ApplicationName", "connectTimeout", "socketTimeout", "loginTimeout", "cancelSignalTimeout",
            "tcpKeepAlive", "tcpNoDelay", "targetServerType", "loadBalanceHosts", "hostRecheckSeconds",
            "prepareThreshold", "preparedStatementCacheQueries", "preparedStatementCacheSizeMiB", "preferQueryMode",
            "sendBufferSize", "receiveBufferSize", "localSocketAddress", "socketFactory", "socketFactoryArg",
            "ssl", "sslmode", "sslcert", "sslkey", "sslrootcert", "sslpassword", "sslpasswordcallback",
            "sslfactory", "sslfactoryarg", "sslhostnameverifier", "sslNegotiation", "sslResponseTimeout",
            "gssEncMode", "gsslib", "gssResponseTimeout", "gssUseDefaultCreds", "kerberosServerName",
            "jaasApplicationName", "jaasLogin", "sspiServiceClass", "useSpnego", "channelBinding", "requireAuth",
            "authenticationPluginClassName", "assumeMinServerVersion", "logServerErrorDetail", "service");

    private static final String JDBC_SCHEME = "jdbc:postgresql";
    private static final String EXPECTED = "postgresql://host:5432/database";

    private static final UriParameters PARAMETERS = UriParameters.builder()
            .text("table", PostgresTable.DEFAULT_NAME)
            .integer("poolSize", 10, 1, 200)
            .duration("timeout", Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofMinutes(10))
            .bool("createSchema", false)
            .driver(DRIVER_PARAMETERS.toArray(String[]::new))
            .build();

    @Override
    public Set<String> schemes() {
        return Set.of("postgresql", "postgres", "jdbc:postgresql");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-postgres";
    }

    @Override
    public UriParameters parameters() {
        return PARAMETERS;
    }

    @Override
    public DedupStore open(StoreUri uri) {
        // Driver and pool timeouts bounded by the store's, and fast recovery after an outage: see UriPool.
        UriPool pool = UriPool.open(uri, JDBC_SCHEME, EXPECTED, PostgresDedupStoreProvider::driver,
                PostgresErrors::worthReconnecting);
        return PostgresDedupStore.builder(pool).buildOpenedBy(uri, pool);
    }

    /** The pool's JDBC URL, credentials and driver properties from either URI form. */
    static void applyLocation(StoreUri uri, HikariConfig pool) {
        UriPool.applyLocation(uri, pool, JDBC_SCHEME, EXPECTED);
    }

    /**
     * The driver's DataSource for the pool {@code config} describes (its JDBC URL and driver properties), with the
     * TCP connect and login bounded by {@code timeout}, socket reads by {@link PooledConnections#replyTimeout}.
     */
    private static PGSimpleDataSource driver(HikariConfig config, Duration timeout) {
        PGSimpleDataSource driver = new PGSimpleDataSource();
        driver.setUrl(config.getJdbcUrl());
        // The pool hands connects to this DataSource, which would drop the pool's properties: give them to the driver.
        for (String name : config.getDataSourceProperties().stringPropertyNames()) {
            try {
                driver.setProperty(name, config.getDataSourceProperties().getProperty(name));
            } catch (SQLException e) {
                throw new DedupConfigurationException("the PostgreSQL driver does not accept the setting " + name
                        + ": " + e.getMessage(), e);
            }
        }
        int seconds = PooledConnections.wholeSeconds(timeout);
        driver.setConnectTimeout(atMost(driver.getConnectTimeout(), seconds));
        driver.setLoginTimeout(atMost(driver.getLoginTimeout(), seconds));
        driver.setSocketTimeout(atMost(driver.getSocketTimeout(),
                (int) PooledConnections.replyTimeout(timeout).toSeconds()));
        return driver;
    }

    /** The driver's "0 = no limit" becomes the limit. */
    private static int atMost(int current, int limit) {
        return current <= 0 ? limit : Math.min(current, limit);
    }
}
