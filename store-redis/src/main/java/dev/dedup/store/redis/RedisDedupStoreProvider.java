package dev.dedup.store.redis;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import dev.dedup.spi.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Opens {@code redis://[password@]host:6379[/db]}, {@code rediss://...} (TLS) and, for a Cluster,
 * {@code redis-cluster://host1:7001,host2:7002} or {@code rediss-cluster://...}. dedup's parameters:
 * {@code namespace}, {@code prefix} (default {@code dedup}), {@code hashTag} (true puts the namespace in a hash
 * tag), {@code timeout} (default 2s), {@code replicas} and {@code replicaTimeout} (WAIT after each claim); other
 * parameters go to Lettuce's {@link RedisURI}.
 *
 * <p>The standalone client it creates rejects commands while disconnected instead of queueing them, so an outage
 * fails calls at once and no queue grows. The Cluster client queues at most {@value #REQUEST_QUEUE_SIZE} commands
 * per connection while a node reconnects (the store's timeout cancels what waits too long), and refreshes the
 * topology on every redirect or reconnect, so a failover is followed within seconds.
 */
public final class RedisDedupStoreProvider implements DedupStoreProvider {
    static final int REQUEST_QUEUE_SIZE = 10_000;

    private static final Set<String> OWN_PARAMETERS = Set.of("namespace", "prefix", "hashTag", "timeout", "replicas",
            "replicaTimeout");

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-cluster", "rediss-cluster");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-store-redis";
    }

    @Override
    public DedupStore open(StoreUri uri) {
        Duration timeout = uri.duration("timeout", Duration.ofSeconds(2));
        boolean cluster = uri.scheme().endsWith("-cluster");
        String scheme = uri.scheme().startsWith("rediss") ? "rediss" : "redis";
        try {
            return cluster ? openCluster(uri, scheme, timeout) : openStandalone(uri, scheme, timeout);
        } catch (RedisException e) {
            throw DedupStoreException.retryable("Redis dedup store", "open " + uri.redacted(), e);
        }
    }

    private static DedupStore openStandalone(StoreUri uri, String scheme, Duration timeout) {
        RedisURI redisUri = RedisURI.create(scheme + ":" + uri.location() + lettuceQuery(uri));
        redisUri.setTimeout(timeout);
        RedisClient client = RedisClient.create(RedisReconnect.resources(), redisUri);
        client.setOptions(ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .build());
        return connect(client, () -> {
            StatefulRedisConnection<String, byte[]> connection = client.connect(RedisDedupStore.CODEC);
            return new Connected(RedisDedupStore.builder(connection), connection::close);
        }, uri, timeout);
    }

    private static DedupStore openCluster(StoreUri uri, String scheme, Duration timeout) {
        String location = uri.location();
        if (!location.startsWith("//")) {
            throw new DedupConfigurationException("Redis Cluster URI " + uri.redacted()
                    + " must look like redis-cluster://host1:7001,host2:7002");
        }
        String authority = location.substring(2);
        String userInfo = "";
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            userInfo = authority.substring(0, at + 1);
            authority = authority.substring(at + 1);
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String node : authority.split(",")) {
            RedisURI seed = RedisURI.create(scheme + "://" + userInfo + node.replaceAll("/.*$", "") + lettuceQuery(uri));
            seed.setTimeout(timeout);
            seeds.add(seed);
        }
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
            uri.parameter("prefix").ifPresent(builder::keyPrefix);
            builder.hashTagNamespace(Boolean.parseBoolean(uri.parameter("hashTag").orElse("false")));
            int replicas = Integer.parseInt(uri.parameter("replicas").orElse("0"));
            if (replicas > 0) {
                builder.waitForReplicas(replicas, uri.duration("replicaTimeout", Duration.ofMillis(100)));
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

    /** The query parameters that are Lettuce's, not dedup's. */
    private static String lettuceQuery(StoreUri uri) {
        StringJoiner query = new StringJoiner("&", "?", "").setEmptyValue("");
        for (Map.Entry<String, String> parameter : uri.parameters().entrySet()) {
            if (!OWN_PARAMETERS.contains(parameter.getKey())) {
                query.add(parameter.getKey() + "=" + parameter.getValue());
            }
        }
        return query.toString();
    }
}
