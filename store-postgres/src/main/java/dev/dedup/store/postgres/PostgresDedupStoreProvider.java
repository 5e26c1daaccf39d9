package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupConfigurationException;

import dev.dedup.spi.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Opens {@code postgresql://user:password@host:5432/db?table=dedup_claims&namespace=orders} and
 * {@code jdbc:postgresql://host:5432/db?user=app&table=...}. dedup's own parameters are {@code table},
 * {@code namespace}, {@code poolSize} (default 10), {@code timeout} (default 5s) and {@code createSchema} (default
 * false); every other parameter goes to the JDBC driver (for example {@code sslmode}).
 */
public final class PostgresDedupStoreProvider implements DedupStoreProvider {
    private static final Set<String> OWN_PARAMETERS = Set.of("table", "namespace", "poolSize", "timeout",
            "createSchema");

    @Override
    public Set<String> schemes() {
        return Set.of("postgresql", "postgres", "jdbc:postgresql");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-postgres";
    }

    @Override
    public DedupStore open(StoreUri uri) {
        Duration timeout = uri.duration("timeout", Duration.ofSeconds(5));
        HikariConfig pool = new HikariConfig();
        pool.setPoolName("dedup-" + uri.namespace());
        pool.setMaximumPoolSize(poolSize(uri));
        // Fail at the first operation, not at open: the application may start before its database.
        pool.setInitializationFailTimeout(-1);
        applyLocation(uri, pool);
        // Driver and pool timeouts bounded by the store's, and fast recovery after an outage: see UriPool.
        HikariDataSource dataSource = UriPool.open(pool, timeout);
        try {
            PostgresDedupStore store = PostgresDedupStore.builder(dataSource)
                    .table(uri.parameter("table").orElse(PostgresTable.DEFAULT_NAME))
                    .namespace(uri.namespace())
                    .timeout(timeout)
                    .validateSchema(false)
                    .onClose(dataSource::close)
                    .build();
            if (Boolean.parseBoolean(uri.parameter("createSchema").orElse("false"))) {
                store.createSchema();
            } else {
                store.validateSchema();
            }
            return store;
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    private static int poolSize(StoreUri uri) {
        String value = uri.parameter("poolSize").orElse("10");
        try {
            int size = Integer.parseInt(value);
            if (size >= 1 && size <= 200) {
                return size;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new DedupConfigurationException("parameter poolSize=" + value + " in " + uri.redacted()
                + " must be a whole number in [1, 200]");
    }

    /** Turns either URI form into a JDBC URL plus credentials, passing the driver's own parameters through. */
    private static void applyLocation(StoreUri uri, HikariConfig pool) {
        String location = uri.location();
        if (!location.startsWith("//")) {
            throw new DedupConfigurationException("PostgreSQL URI " + uri.redacted() + " must look like"
                    + " postgresql://host:5432/database or jdbc:postgresql://host:5432/database");
        }
        String authority = location.substring(2);
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            pool.setUsername(decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) {
                pool.setPassword(decode(userInfo.substring(colon + 1)));
            }
        }
        StringJoiner driverParameters = new StringJoiner("&", "?", "").setEmptyValue("");
        for (Map.Entry<String, String> parameter : uri.parameters().entrySet()) {
            if (OWN_PARAMETERS.contains(parameter.getKey())) {
                continue;
            }
            switch (parameter.getKey()) {
                case "user" -> pool.setUsername(parameter.getValue());
                case "password" -> pool.setPassword(parameter.getValue());
                default -> driverParameters.add(encode(parameter.getKey()) + "=" + encode(parameter.getValue()));
            }
        }
        pool.setJdbcUrl("jdbc:postgresql://" + authority + driverParameters);
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    private static String encode(String text) {
        return java.net.URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

}
