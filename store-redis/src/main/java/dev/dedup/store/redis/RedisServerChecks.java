package dev.dedup.store.redis;

import dev.dedup.DedupConfigurationException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the store checks on a server before it serves, from {@code INFO} alone (it works where {@code CONFIG} is
 * disabled): a version it is verified on, a memory policy that never evicts a live claim, and the right kind of
 * connection for a Cluster node. Each problem fails at open with a message that says what to change, instead of
 * as a lost claim or a MOVED error later.
 */
final class RedisServerChecks {
    /** The oldest Redis the store is verified on. */
    static final int MIN_MAJOR = 7;
    static final int MIN_MINOR = 0;

    private static final Logger LOG = LoggerFactory.getLogger(RedisServerChecks.class);

    private RedisServerChecks() {}

    /**
     * Checks one server from its {@code INFO server}, {@code INFO memory} and {@code INFO cluster} text.
     *
     * @param node how to name the server in messages (host:port, never credentials)
     * @param viaCluster true when the store reaches it through a Cluster connection
     * @param allowEviction true to log a warning, rather than fail, on an evicting memory policy
     */
    static void check(String node, String info, boolean viaCluster, boolean allowEviction) {
        String version = field(info, "redis_version").orElse("unknown");
        if (!atLeastMinimum(version)) {
            throw new DedupConfigurationException("Redis " + node + " runs version " + version + "; the dedup store"
                    + " needs Redis " + MIN_MAJOR + "." + MIN_MINOR + " or later");
        }
        if (!viaCluster && field(info, "cluster_enabled").filter("1"::equals).isPresent()) {
            throw new DedupConfigurationException("Redis " + node + " is a Cluster node (cluster_enabled:1); open it"
                    + " with redis-cluster://host1:port1,host2:port2 or RedisDedupStore.builder(a"
                    + " StatefulRedisClusterConnection), not as a standalone server");
        }
        String policy = field(info, "maxmemory_policy").orElse("unknown");
        if (!"noeviction".equals(policy)) {
            String problem = "Redis " + node + " has maxmemory-policy " + policy + ": under memory pressure it may"
                    + " evict a live claim, and the key is then processed twice (every dedup key has a TTL, so"
                    + " volatile-* policies evict them too); set maxmemory-policy noeviction";
            if (!allowEviction) {
                throw new DedupConfigurationException(problem + ", or accept the risk with"
                        + " RedisDedupStore.Builder.allowEvictingMemoryPolicy(true)");
            }
            LOG.warn("{} (accepted by allowEvictingMemoryPolicy)", problem);
        }
    }

    /** True for {@code major.minor[.patch]} at or above the minimum; false for anything unparsable. */
    static boolean atLeastMinimum(String version) {
        String[] parts = version.split("\\.");
        try {
            int major = Integer.parseInt(parts[0]);
            int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
            return major > MIN_MAJOR || (major == MIN_MAJOR && minor >= MIN_MINOR);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The value of a {@code name:value} line of INFO text. */
    static Optional<String> field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return Optional.of(line.substring(name.length() + 1).trim());
            }
        }
        return Optional.empty();
    }
}
