package dev.dedup.store.redis;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Opens {@code redis://[[user:]password@]host:6379[/db]}, {@code rediss://...} (TLS) and, for a Cluster,
 * {@code redis-cluster://host1:7001,host2:7002} or {@code rediss-cluster://...}. dedup's parameters:
 * {@code namespace}, {@code prefix} (default {@code dedup}), {@code hashTag} (true puts the namespace in a hash
 * tag), {@code timeout} (default 2s, in [10ms, 5m]), {@code replicas} (in [0, 16]) and {@code replicaTimeout} (WAIT
 * after each claim), {@code allowEvictingMemoryPolicy} (default false: a server that may evict keys is refused). The client's: {@code database} (else the path, {@code redis://host/3}; standalone only),
 * {@code clientName} and {@code verifyPeer} ({@code NONE}, {@code CA} or {@code FULL}, for TLS). The client is
 * configured from these values; the URI is never handed to Lettuce to parse, since its parser ignores unknown or
 * malformed parameters.
 *
 * <p>The standalone client it creates rejects commands while disconnected instead of queueing them, so an outage
 * fails calls at once and no queue grows. The Cluster client queues at most {@value #REQUEST_QUEUE_SIZE} commands
 * per connection while a node reconnects (the store's timeout cancels what waits too long), and refreshes the
 * topology on every redirect or reconnect, so a failover is followed within seconds.
 */
public final class RedisDedupStoreProvider implements DedupStoreProvider {
    static final int REQUEST_QUEUE_SIZE = 10_000;

    private static final int DEFAULT_PORT = 6379;

    private static final UriParameters PARAMETERS = UriParameters.builder()
            .text("prefix", null)
            .bool("hashTag", false)
            .bool("allowEvictingMemoryPolicy", false)
            .duration("timeout", Duration.ofSeconds(2), Duration.ofMillis(10), Duration.ofMinutes(5))
            .integer("replicas", 0, 0, 16)
            .duration("replicaTimeout", Duration.ofMillis(100), Duration.ofMillis(1), Duration.ofMinutes(5))
            .integer("database", 0, 0, Integer.MAX_VALUE)
            .text("clientName", null)
            .choice("verifyPeer", null, "NONE", "CA", "FULL")
            .build();

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-cluster", "rediss-cluster");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-redis";
    }

    @Override
    public UriParameters parameters() {
        return PARAMETERS;
    }

    @Override
    public DedupStore open(StoreUri uri) {
        Duration timeout = uri.duration("timeout");
        boolean cluster = uri.scheme().endsWith("-cluster");
        List<RedisURI> nodes = redisUris(uri, timeout);
        try {
            return cluster ? openCluster(uri, nodes, timeout) : openStandalone(uri, nodes, timeout);
        } catch (RedisException e) {
            throw DedupStoreException.retryable("Redis dedup store", "open " + uri.redacted(), e);
        }
    }

    /** One {@link RedisURI} per host, built from the checked values: credentials, TLS, database, client name. */
    static List<RedisURI> redisUris(StoreUri uri, Duration timeout) {
        boolean cluster = uri.scheme().endsWith("-cluster");
        List<StoreUri.HostPort> hosts = uri.hosts();
        if (!cluster && hosts.size() > 1) {
            throw new DedupConfigurationException("Redis URI " + uri.redacted() + " names " + hosts.size()
                    + " hosts; a standalone server has one, a Cluster is opened with redis-cluster://h1:7001,h2:7002");
        }
        int database = database(uri, cluster);
        List<RedisURI> nodes = new ArrayList<>();
        for (StoreUri.HostPort host : hosts) {
            RedisURI.Builder node = RedisURI.Builder.redis(host.host(), host.portOr(DEFAULT_PORT))
                    .withSsl(uri.scheme().startsWith("rediss"))
                    .withTimeout(timeout)
                    .withDatabase(database);
            uri.choice("verifyPeer").ifPresent(mode -> node.withVerifyPeer(SslVerifyMode.valueOf(mode)));
            uri.text("clientName").ifPresent(node::withClientName);
            if (uri.hasUserInfo()) {
                // Redis's own form: user-info without ':' is the password alone (AUTH password), as redis-cli reads it.
                String user = uri.password().isPresent() ? uri.user().orElse("") : "";
                String password = uri.password().orElseGet(() -> uri.user().orElse(""));
                if (user.isEmpty()) {
                    node.withPassword(password.toCharArray());
                } else {
                    node.withAuthentication(user, password.toCharArray());
                }
            }
            nodes.add(node.build());
        }
        return nodes;
    }

    private static int database(StoreUri uri, boolean cluster) {
        String path = uri.path().orElse("");
        boolean inParameter = uri.parameters().containsKey("database");
        if (!path.isEmpty() && inParameter) {
            throw new DedupConfigurationException("Redis URI " + uri.redacted() + " gives the database twice, in the"
                    + " path and in database=; give it once");
        }
        if (!path.isEmpty() && !path.matches("\\d{1,9}")) {
            throw new DedupConfigurationException("Redis URI " + uri.redacted() + " has the path '/" + path
                    + "'; the path can only be the database number, a whole number in [0, 999999999]");
        }
        int database = path.isEmpty() ? uri.integer("database") : Integer.parseInt(path);
        if (cluster && database != 0) {
            throw new DedupConfigurationException("Redis Cluster URI " + uri.redacted() + " selects database "
                    + database + "; a Cluster has only database 0");
        }
        return database;
    }

    private static DedupStore openStandalone(StoreUri uri, List<RedisURI> nodes, Duration timeout) {
        RedisClient client = RedisClient.create(RedisReconnect.resources(), nodes.get(0));
        client.setOptions(ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .build());
        return connect(client, () -> {
            StatefulRedisConnection<String, byte[]> connection = client.connect(RedisDedupStore.CODEC);
            return new Connected(RedisDedupStore.builder(connection), connection::close);
        }, uri, timeout);
    }

    private static DedupStore openCluster(StoreUri uri, List<RedisURI> seeds, Duration timeout) {
        RedisClusterClient client = RedisClusterClient.create(RedisReconnect.resources(), seeds);
        client.setOptions(ClusterClientOptions.builder()
                // Node connections open lazily, so rejecting while disconnected would fail the first command to
                // each node; instead queue briefly, bounded, and let the store's timeout cancel what waits too long.
                .requestQueueSize(REQUEST_QUEUE_SIZE)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .enablePeriodicRefresh(Duration.ofSeconds(5))
                        .build())
                .build());
        return connect(client, () -> {
            StatefulRedisClusterConnection<String, byte[]> connection = client.connect(RedisDedupStore.CODEC);
            return new Connected(RedisDedupStore.builder(connection), connection::close);
        }, uri, timeout);
    }

    /** A connection just opened: the builder on it, and how to close it. */
    private record Connected(RedisDedupStore.Builder builder, Runnable closeConnection) {}

    /** Connects and builds the store; the store owns the client from then on, and any failure shuts it down. */
    private static DedupStore connect(AbstractRedisClient client, Supplier<Connected> connector, StoreUri uri,
            Duration timeout) {
        Runnable shutdown = () -> {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            client.getResources().shutdown(0, 2, TimeUnit.SECONDS); // given to the client, so not shut down by it
        };
        try {
            Connected connected = connector.get();
            return configure(connected.builder(), uri, timeout, () -> {
                connected.closeConnection().run();
                shutdown.run();
            });
        } catch (RuntimeException e) {
            shutdown.run();
            throw e;
        }
    }

    private static DedupStore configure(RedisDedupStore.Builder builder, StoreUri uri, Duration timeout,
            Runnable onClose) {
        try {
            builder.namespace(uri.namespace()).timeout(timeout).onClose(onClose);
            uri.text("prefix").ifPresent(builder::keyPrefix);
            builder.hashTagNamespace(uri.bool("hashTag"));
            builder.allowEvictingMemoryPolicy(uri.bool("allowEvictingMemoryPolicy"));
            int replicas = uri.integer("replicas");
            if (replicas > 0) {
                builder.waitForReplicas(replicas, uri.duration("replicaTimeout"));
            }
            return builder.build();
        } catch (IllegalArgumentException e) {
            onClose.run();
            throw new DedupConfigurationException("bad parameter in " + uri.redacted() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            onClose.run();
            throw e;
        }
    }
}
