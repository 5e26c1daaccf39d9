package dev.dedup.store.redis;

import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reads {@code INFO} from every master at open and hands it to {@link RedisServerChecks}. */
final class RedisServerProbe {
    private final RedisTopology topology;
    private final RedisCalls calls;

    RedisServerProbe(RedisTopology topology, Duration timeout) {
        this.topology = topology;
        this.calls = new RedisCalls(timeout);
    }

    void check(boolean allowEviction) {
        long deadline = calls.deadline();
        Map<String, RedisClusterAsyncCommands<String, byte[]>> masters;
        try {
            masters = topology.masters();
        } catch (RedisException e) {
            throw RedisErrors.translate("open (find the masters)", e);
        }
        // Three sections, sent together: one round trip per server (INFO with several sections needs 7.0).
        Map<String, RedisFuture<String>[]> sent = new LinkedHashMap<>();
        masters.forEach((node, commands) -> sent.put(node, sections(commands)));
        sent.forEach((node, replies) -> {
            StringBuilder info = new StringBuilder();
            for (RedisFuture<String> reply : replies) {
                info.append(calls.await(reply, deadline, "open (INFO of " + node + ")")).append('\n');
            }
            RedisServerChecks.check(node, info.toString(), topology.cluster(), allowEviction);
        });
    }

    @SuppressWarnings("unchecked")
    private static RedisFuture<String>[] sections(RedisClusterAsyncCommands<String, byte[]> commands) {
        return new RedisFuture[] {commands.info("server"), commands.info("memory"), commands.info("cluster")};
    }
}
