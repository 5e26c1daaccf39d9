package dev.dedup.store.redis;

import dev.dedup.DedupStoreException;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.netty.util.Timer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Where the store's commands go: one standalone server, or the masters of a Cluster. */
interface RedisTopology {
    /** Commands routed by key (a Cluster connection follows MOVED and ASK). */
    RedisClusterAsyncCommands<String, byte[]> routed();

    /**
     * The connection to the server that owns {@code redisKey}, for a write that WAIT must follow: WAIT counts the
     * replicas that acknowledged the writes of its own connection, so both must go on the same one.
     */
    RedisClusterAsyncCommands<String, byte[]> writerOf(String redisKey);

    /** The servers that take writes, by host:port, to check at open. */
    Map<String, RedisClusterAsyncCommands<String, byte[]>> masters();

    /** True for a Cluster. */
    boolean cluster();

    /** The client's own timer, for the deadlines and resend pauses of non-blocking calls. */
    Timer timer();

    static RedisTopology standalone(StatefulRedisConnection<String, byte[]> connection) {
        return new RedisTopology() {
            @Override
            public RedisClusterAsyncCommands<String, byte[]> routed() {
                return connection.async();
            }

            @Override
            public RedisClusterAsyncCommands<String, byte[]> writerOf(String redisKey) {
                return connection.async();
            }

            @Override
            public Map<String, RedisClusterAsyncCommands<String, byte[]>> masters() {
                return Map.of("server", connection.async());
            }

            @Override
            public boolean cluster() {
                return false;
            }

            @Override
            public Timer timer() {
                return connection.getResources().timer();
            }
        };
    }

    static RedisTopology cluster(StatefulRedisClusterConnection<String, byte[]> connection) {
        return new RedisTopology() {
            @Override
            public RedisClusterAsyncCommands<String, byte[]> routed() {
                return connection.async();
            }

            @Override
            public RedisClusterAsyncCommands<String, byte[]> writerOf(String redisKey) {
                int slot = SlotHash.getSlot(redisKey);
                RedisClusterNode master = connection.getPartitions().getMasterBySlot(slot);
                if (master == null) {
                    // Between two views of a changing topology no node owns the slot yet: worth a retry.
                    throw new DedupStoreException("Redis dedup store claim failed: no master known for slot " + slot
                            + " (the Cluster topology is changing)", null, true);
                }
                try {
                    return connection.getConnection(master.getNodeId()).async();
                } catch (RedisException e) {
                    throw RedisErrors.translate("claim (connect to the slot's master)", e);
                }
            }

            @Override
            public Map<String, RedisClusterAsyncCommands<String, byte[]>> masters() {
                List<RedisClusterNode> masters = connection.getPartitions().stream()
                        .filter(node -> node.is(RedisClusterNode.NodeFlag.UPSTREAM))
                        .filter(node -> !node.getSlots().isEmpty())
                        .toList();
                Map<String, RedisClusterAsyncCommands<String, byte[]>> byName = new LinkedHashMap<>();
                for (RedisClusterNode master : masters) {
                    byName.put(master.getUri().getHost() + ":" + master.getUri().getPort(),
                            connection.getConnection(master.getNodeId()).async());
                }
                return byName;
            }

            @Override
            public boolean cluster() {
                return true;
            }

            @Override
            public Timer timer() {
                return connection.getResources().timer();
            }
        };
    }
}
