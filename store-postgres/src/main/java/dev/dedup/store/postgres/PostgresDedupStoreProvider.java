package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

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
        Duration timeout = uri.duration("timeout");
        HikariConfig pool = new HikariConfig();
        pool.setPoolName("dedup-" + uri.namespace());
        pool.setMaximumPoolSize(uri.integer("poolSize"));
        // Fail at the first operation, not at open: the application may start before its database.
        pool.setInitializationFailTimeout(-1);
        applyLocation(uri, pool);
        // Driver and pool timeouts bounded by the store's, and fast recovery after an outage: see UriPool.
        HikariDataSource dataSource = UriPool.open(pool, timeout);
        try {
            PostgresDedupStore store = PostgresDedupStore.builder(dataSource)
                    .table(uri.text("table").orElseThrow())
                    .namespace(uri.namespace())
                    .timeout(timeout)
                    .validateSchema(false)
                    .onClose(dataSource::close)
                    .build();
            if (uri.bool("createSchema")) {
                store.createSchema();
            } else {
                store.validateSchema();
            }
            return store;
        } catch (RuntimeException e) {
            closeInBackground(dataSource);
            throw e;
        }
    }

    /**
     * Turns either URI form into a JDBC URL (hosts and database only) plus the credentials and driver properties, set
     * as values rather than spliced into the URL, so nothing needs encoding twice.
     */
    static void applyLocation(StoreUri uri, HikariConfig pool) {
        if (!uri.location().startsWith("//")) {
            throw new DedupConfigurationException("PostgreSQL URI " + uri.redacted() + " must look like"
                    + " postgresql://host:5432/database or jdbc:postgresql://host:5432/database");
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
        pool.setJdbcUrl("jdbc:postgresql://" + hosts + "/" + uri.path().orElse(""));
    }

    /**
     * Closes a pool whose store failed to open without making the caller wait: HikariCP's shutdown waits up to the
     * login timeout for a connect still in flight (a server that accepts and never answers), which would double the
     * time to report the failure.
     */
    private static void closeInBackground(HikariDataSource dataSource) {
        Thread closer = new Thread(dataSource::close, "dedup-close-failed-pool");
        closer.setDaemon(true);
        closer.start();
    }
}
