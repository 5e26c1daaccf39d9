package dev.dedup.store.redis;

import dev.dedup.tck.TestServers;
import java.util.List;
import org.testcontainers.containers.GenericContainer;

/** The real Redis servers the tests run against: a standalone server and a 3-master Cluster with replicas. */
final class RedisTestSupport {
    private static String standalone;
    private static String cluster;

    private RedisTestSupport() {}

    /** {@code redis://host:port} of a standalone Redis 7. */
    static synchronized String standaloneUrl() {
        if (standalone == null) {
            standalone = TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", RedisTestSupport::startContainer);
        }
        return standalone;
    }

    /**
     * {@code redis://host1:port1,host2:port2,...} of a Redis Cluster with 3 masters and 3 replicas. No container
     * stands in here: a cluster's nodes announce addresses a client outside Docker cannot reach.
     */
    static synchronized String clusterUrl() {
        if (cluster == null) {
            cluster = TestServers.require("a Redis 7 Cluster (3 masters, 3 replicas)", "DEDUP_TEST_REDIS_CLUSTER_URL",
                    null);
        }
        return cluster;
    }

    /** The cluster's seed nodes as host:port. */
    static List<String> clusterNodes() {
        return List.of(clusterUrl().substring("redis://".length()).split(","));
    }

    private static String startContainer() {
        GenericContainer<?> container = new GenericContainer<>("redis:7.0").withExposedPorts(6379);
        container.start();
        return "redis://" + container.getHost() + ":" + container.getMappedPort(6379);
    }
}
