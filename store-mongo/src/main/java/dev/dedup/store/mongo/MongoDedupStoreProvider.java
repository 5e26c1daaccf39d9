package dev.dedup.store.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import dev.dedup.spi.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

/**
 * Opens {@code mongodb://user:password@host:27017/?database=app&collection=dedup_claims&namespace=orders} and
 * {@code mongodb+srv://...}. dedup's own parameters are {@code database} (else the connection string's path, for
 * example {@code mongodb://host/app}), {@code collection} (default {@code dedup_claims}), {@code namespace},
 * {@code timeout} (default 5s) and {@code createIndexes} (default false: the TTL index is only checked); every other
 * parameter goes to the driver's {@link ConnectionString} (for example {@code replicaSet}, {@code authSource},
 * {@code tls}).
 *
 * <p>{@code timeout} also becomes the client's server-selection, connect, socket-read and pool-wait timeouts (unless
 * the connection string sets them), so a server that is down fails calls within about that long instead of the
 * driver's 30-second server selection. The client created here is closed when the store closes.
 */
public final class MongoDedupStoreProvider implements DedupStoreProvider {
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

    private static final Set<String> OWN_PARAMETERS = Set.of("database", "collection", "namespace", "timeout",
            "createIndexes");

    @Override
    public Set<String> schemes() {
        return Set.of("mongodb", "mongodb+srv");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-mongo";
    }

    @Override
    public DedupStore open(StoreUri uri) {
        Duration timeout = uri.duration("timeout", DEFAULT_TIMEOUT);
        String namespace = uri.namespace();
        boolean createIndexes = flag(uri, "createIndexes");
        ConnectionString connectionString = connectionString(uri);
        String database = uri.parameter("database").orElse(connectionString.getDatabase());
        if (database == null || database.isEmpty()) {
            throw new DedupConfigurationException("MongoDB URI " + uri.redacted() + " names no database; add"
                    + " ?database=<name> or put it in the path: mongodb://host:27017/<name>");
        }
        MongoClient client = MongoClients.create(settings(connectionString, timeout));
        try {
            MongoDedupStore.Builder builder;
            try {
                builder = MongoDedupStore.builder(client, database)
                        .collection(uri.parameter("collection").orElse(MongoDedupStore.DEFAULT_COLLECTION))
                        .namespace(namespace)
                        .timeout(timeout)
                        .validateIndexes(false)
                        .onClose(client::close);
            } catch (IllegalArgumentException e) {
                throw new DedupConfigurationException("bad parameter in " + uri.redacted() + ": " + e.getMessage(), e);
            }
            MongoDedupStore store = builder.build();
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
            client.close();
            throw e;
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

    /** The URI without dedup's parameters, as the driver reads it. */
    static ConnectionString connectionString(StoreUri uri) {
        StringJoiner query = new StringJoiner("&", "?", "").setEmptyValue("");
        for (Map.Entry<String, String> parameter : uri.parameters().entrySet()) {
            if (!OWN_PARAMETERS.contains(parameter.getKey())) {
                query.add(encode(parameter.getKey()) + "=" + encode(parameter.getValue()));
            }
        }
        String location = uri.location();
        if (!location.startsWith("//") || location.length() == 2) {
            throw new DedupConfigurationException("MongoDB URI " + uri.redacted() + " must look like"
                    + " mongodb://host:27017/?database=app or mongodb+srv://cluster.example.net/?database=app");
        }
        // The driver wants a '/' between the hosts and the options.
        String separator = query.length() > 0 && location.indexOf('/', 2) < 0 ? "/" : "";
        try {
            return new ConnectionString(uri.scheme() + ":" + location + separator + query);
        } catch (IllegalArgumentException e) {
            // The driver's message names the part it rejects, never a password.
            throw new DedupConfigurationException("MongoDB URI " + uri.redacted() + " is not a valid connection"
                    + " string: " + e.getMessage(), e);
        }
    }

    private static boolean flag(StoreUri uri, String name) {
        String value = uri.parameter(name).orElse("false").trim().toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
            throw new DedupConfigurationException("parameter " + name + "=" + value + " in " + uri.redacted()
                    + " must be true or false");
        }
        return value.equals("true");
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
