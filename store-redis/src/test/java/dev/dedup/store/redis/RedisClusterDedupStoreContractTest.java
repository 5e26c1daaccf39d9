package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.DedupStoreContractTest;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract kit against the real 3-master Redis Cluster: keys spread over every slot range. */
class RedisClusterDedupStoreContractTest extends DedupStoreContractTest {
    private static RedisClusterClient client;
    private static StatefulRedisClusterConnection<String, byte[]> connection;

    @BeforeAll
    static void connect() {
        List<RedisURI> seeds = RedisTestSupport.clusterNodes().stream().map(node -> RedisURI.create("redis://" + node))
                .toList();
        client = RedisClusterClient.create(seeds);
        connection = client.connect(RedisDedupStore.CODEC);
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return RedisDedupStore.builder(connection).namespace(namespace).build();
    }

    @Override
    protected String storeUri(String namespace) {
        return "redis-cluster://" + String.join(",", RedisTestSupport.clusterNodes()) + "?namespace=" + namespace;
    }
}
