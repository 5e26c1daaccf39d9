package dev.dedup.store.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.PercentCoding;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

/**
 * Opens {@code mongodb://user:password@host:27017/?database=app&collection=dedup_claims&namespace=orders} and
 * {@code mongodb+srv://...}. dedup's own parameters are {@code database} (else the connection string's path, for
 * example {@code mongodb://host/app}), {@code collection} (default {@code dedup_claims}), {@code namespace},
 * {@code timeout} (default 5s, in [1ms, 10m]) and {@code createIndexes} (default false: the TTL index is only
 * checked); the driver's connection-string options listed in {@link #DRIVER_PARAMETERS} (for example
 * {@code replicaSet}, {@code authSource}, {@code tls}; in any case, as the driver reads them) go to its
 * {@link ConnectionString}, any other name is refused.
 *
 * <p>{@code timeout} also becomes the client's server-selection, connect, socket-read and pool-wait timeouts (unless
 * the connection string sets them), so a server that is down fails calls within about that long instead of the
 * driver's 30-second server selection. The client created here is closed when the store closes. With the
 * optional {@code mongodb-driver-reactivestreams} on the class path, a reactive client on the same settings is
 * created too, for a native {@link DedupStore#async()}, and closed with the store.
 */
public final class MongoDedupStoreProvider implements DedupStoreProvider {
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    /**
     * The driver 5.x's connection-string options a URI may set. Left out: deprecated or experimental ones
     * ({@code safe}, {@code sslInvalidHostNameAllowed}, {@code srvAllowedHostsSuffix}, retargeting and adaptive
     * retries).
     */
    static final Set<String> DRIVER_PARAMETERS = Set.of("replicaSet", "authSource", "authMechanism",
            "authMechanismProperties", "gssapiServiceName", "tls", "ssl", "tlsInsecure", "tlsAllowInvalidHostnames",
            "connectTimeoutMS", "socketTimeoutMS", "serverSelectionTimeoutMS", "waitQueueTimeoutMS", "timeoutMS",
            "maxIdleTimeMS", "maxLifeTimeMS", "minPoolSize", "maxPoolSize", "maxConnecting", "localThresholdMS",
            "heartbeatFrequencyMS", "serverMonitoringMode", "appName", "compressors", "zlibCompressionLevel",
            "readPreference", "readPreferenceTags", "maxStalenessSeconds", "readConcernLevel", "w", "wtimeoutMS",
            "journal", "retryWrites", "retryReads", "uuidRepresentation", "directConnection", "loadBalanced",
            "srvMaxHosts", "srvServiceName", "proxyHost", "proxyPort", "proxyUsername", "proxyPassword");

    /** Whether the optional reactive-streams driver is on the class path: then the store gets a native async(). */
    static final boolean REACTIVE_DRIVER = onClassPath("com.mongodb.reactivestreams.client.MongoClients");

    private static final UriParameters PARAMETERS = UriParameters.builder()
            .text("database", null)
            .text("collection", MongoDedupStore.DEFAULT_COLLECTION)
            .duration("timeout", DEFAULT_TIMEOUT, Duration.ofMillis(10), Duration.ofMinutes(5))
            .bool("createIndexes", false)
            .driver(DRIVER_PARAMETERS.toArray(String[]::new))
            .driverIgnoresCase()
            .build();

    @Override
    public Set<String> schemes() {
        return Set.of("mongodb", "mongodb+srv");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-mongo";
    }

    @Override
    public UriParameters parameters() {
        return PARAMETERS;
    }

    @Override
    public DedupStore open(StoreUri uri) {
        Duration timeout = uri.duration("timeout");
        String namespace = uri.namespace();
        boolean createIndexes = uri.bool("createIndexes");
        ConnectionString connectionString = connectionString(uri);
        String database = uri.text("database").orElse(connectionString.getDatabase());
        if (database == null || database.isEmpty()) {
            throw new DedupConfigurationException("MongoDB URI " + uri.redacted() + " names no database; add"
                    + " ?database=<name> or put it in the path: mongodb://host:27017/<name>");
        }
        MongoClientSettings settings = settings(connectionString, timeout);
        MongoClient client = MongoClients.create(settings);
        Runnable closeClients = client::close;
        try {
            MongoDedupStore.Builder builder;
            try {
                builder = MongoDedupStore.builder(client, database)
                        .collection(uri.text("collection").orElseThrow())
                        .namespace(namespace)
                        .timeout(timeout)
                        .validateIndexes(false);
            } catch (IllegalArgumentException e) {
                throw new DedupConfigurationException("bad parameter in " + uri.redacted() + ": " + e.getMessage(), e);
            }
            if (REACTIVE_DRIVER) {
                // The only place the optional driver is touched: without it the store opens as before.
                closeClients = MongoAsyncBackend.ownClient(builder, settings, closeClients);
            }
            MongoDedupStore store = builder.onClose(closeClients).build();
            try {
                if (createIndexes) {
                    store.createIndexes();
                } else {
                    store.validateIndexes();
                }
            } catch (DedupStoreException e) {
                // Name the store that could not open, its password redacted.
                throw new DedupStoreException(MongoErrors.STORE + " open " + uri.redacted() + " failed: "
                        + e.getMessage(), e.getCause(), e.isRetryable());
            }
            return store;
        } catch (RuntimeException e) {
            closeClients.run();
            throw e;
        }
    }

    private static boolean onClassPath(String className) {
        try {
            Class.forName(className, false, MongoDedupStoreProvider.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The client's settings: the connection string's, with {@code timeout} wherever it sets no timeout of its own. */
    static MongoClientSettings settings(ConnectionString connectionString, Duration timeout) {
        long millis = timeout.toMillis();
        MongoClientSettings.Builder settings = MongoClientSettings.builder().applyConnectionString(connectionString);
        if (connectionString.getApplicationName() == null) {
            settings.applicationName("dedup-store-mongo");
        }
        return settings
                .applyToClusterSettings(cluster -> {
                    if (connectionString.getServerSelectionTimeout() == null) {
                        cluster.serverSelectionTimeout(millis, TimeUnit.MILLISECONDS);
                    }
                })
                .applyToSocketSettings(socket -> {
                    if (connectionString.getConnectTimeout() == null) {
                        socket.connectTimeout(millis, TimeUnit.MILLISECONDS);
                    }
                    if (connectionString.getSocketTimeout() == null) {
                        socket.readTimeout(millis, TimeUnit.MILLISECONDS);
                    }
                })
                .applyToConnectionPoolSettings(pool -> {
                    if (connectionString.getMaxWaitTime() == null) {
                        pool.maxWaitTime(millis, TimeUnit.MILLISECONDS);
                    }
                })
                .build();
    }

    /**
     * The URI as the driver reads it: dedup's parameters removed, the user-info and the driver's parameters
     * re-encoded from their decoded values (so a {@code +} in a password stays a plus whatever the driver's decoder).
     */
    static ConnectionString connectionString(StoreUri uri) {
        String location = uri.location();
        if (!location.startsWith("//") || location.length() == 2) {
            throw new DedupConfigurationException("MongoDB URI " + uri.redacted() + " must look like"
                    + " mongodb://host:27017/?database=app or mongodb+srv://cluster.example.net/?database=app");
        }
        StringBuilder driver = new StringBuilder(uri.scheme()).append("://");
        if (uri.hasUserInfo()) {
            driver.append(PercentCoding.encode(uri.user().orElse("")));
            uri.password().ifPresent(password -> driver.append(':').append(PercentCoding.encode(password)));
            driver.append('@');
        }
        driver.append(uri.hostsText().orElse(""));
        StringJoiner query = new StringJoiner("&", "?", "").setEmptyValue("");
        for (Map.Entry<String, String> parameter : uri.driverParameters()) {
            query.add(PercentCoding.encode(parameter.getKey()) + "=" + PercentCoding.encode(parameter.getValue()));
        }
        // The driver wants a '/' between the hosts and the options.
        uri.path().ifPresentOrElse(path -> driver.append('/').append(path), () -> {
            if (query.length() > 0) {
                driver.append('/');
            }
        });
        try {
            return new ConnectionString(driver.append(query).toString());
        } catch (IllegalArgumentException e) {
            // DedupStores.open scrubs any credential the driver's message may echo.
            throw new DedupConfigurationException("MongoDB URI " + uri.redacted() + " is not a valid connection"
                    + " string: " + e.getMessage(), e);
        }
    }
}
