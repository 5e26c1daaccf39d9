package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** WAIT on the real Cluster: it must follow the claim's write on the same connection, or it proves nothing. */
class RedisClusterWaitTest {
    /** Keeps a replica's event loop busy, so it neither applies nor acknowledges writes for a while. */
    private static final String BUSY = "#!lua flags=no-writes\n"
            + "local t = redis.call('TIME')\n"
            + "local start = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
            + "repeat\n"
            + "  local n = redis.call('TIME')\n"
            + "until tonumber(n[1]) * 1000000 + tonumber(n[2]) - start > tonumber(ARGV[1]) * 1000\n"
            + "return 1\n";

    private RedisClusterClient client;
    private StatefulRedisClusterConnection<String, byte[]> connection;

    @BeforeEach
    void connect() {
        client = RedisClusterClient.create(RedisTestSupport.clusterNodes().stream()
                .map(node -> RedisURI.create("redis://" + node)).toList());
        connection = client.connect(RedisDedupStore.CODEC);
    }

    @AfterEach
    void disconnect() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Test
    @DisplayName("while the key's replica cannot acknowledge, a claim with WAIT 1 fails and frees the key")
    void waitCountsTheReplicasOfTheClaimsOwnWrite() throws Exception {
        RedisDedupStore redis = RedisDedupStore.builder(connection).namespace("wait-" + UUID.randomUUID()
                .toString().substring(0, 8)).waitForReplicas(1, Duration.ofMillis(300)).build();
        DedupStore store = view(redis);
        String tag = "{" + UUID.randomUUID() + "}"; // both keys in one slot, so on one master
        String key = tag + "-k";
        // A first claim opens the store's connections to the master: a WAIT sent later on a connection other than
        // the write's counts replicas against that connection's older writes and returns at once.
        assertThat(store.claim(tag + "-warm-up", Duration.ofMinutes(1))).isInstanceOf(Claim.class);
        RedisClusterNode replica = replicaOf(redis.redisKey(key));

        RedisClient replicaClient = RedisClient.create(RedisURI.create("redis://" + replica.getUri().getHost() + ":"
                + replica.getUri().getPort()));
        try (StatefulRedisConnection<String, String> replicaConnection = replicaClient.connect()) {
            RedisFuture<Long> busy = replicaConnection.async().eval(BUSY, ScriptOutputType.INTEGER, new String[0],
                    "1500");
            Thread.sleep(100); // the script is running: the replica reads nothing from its master now

            assertThatThrownBy(() -> store.claim(key, Duration.ofMinutes(1)))
                    .isInstanceOf(DedupStoreException.class)
                    .hasMessageContaining("reached 0 of 1 replicas");
            assertThat(busy.get(5, TimeUnit.SECONDS)).isEqualTo(1L);
        } finally {
            replicaClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        // Freed by the failed claim, and acknowledged now that the replica is back.
        assertThat(store.claim(key, Duration.ofMinutes(1))).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("no master known for the key's slot (a topology change) is a retryable DedupStoreException")
    void unknownMasterIsRetryable() {
        DedupStore store = view(RedisDedupStore.builder(connection).namespace("wait-gap")
                .waitForReplicas(1, Duration.ofMillis(300)).build());
        connection.getPartitions().clear(); // this connection's view, as between two topology refreshes

        assertThatThrownBy(() -> store.claim("k-" + UUID.randomUUID(), Duration.ofMinutes(1)))
                .isInstanceOf(DedupStoreException.class)
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                .hasMessageContaining("no master known for slot");
    }

    /** The store the tests call: the blocking store itself here, its async view in the async variant. */
    DedupStore view(RedisDedupStore store) {
        return store;
    }

    private RedisClusterNode replicaOf(String redisKey) {
        RedisClusterNode master = connection.getPartitions().getMasterBySlot(SlotHash.getSlot(redisKey));
        List<RedisClusterNode> replicas = connection.getPartitions().stream()
                .filter(node -> master.getNodeId().equals(node.getSlaveOf()))
                .filter(node -> !node.is(RedisClusterNode.NodeFlag.FAIL))
                .toList();
        assertThat(replicas).as("replicas of the key's master").hasSize(1);
        return replicas.get(0);
    }
}
