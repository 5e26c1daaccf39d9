package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.tck.ServerOutages;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Kills one master of the 3-master Cluster during a run of claims: its replica takes over and claims continue. It
 * measures how long claims failed and counts claims lost by the failover, without and with WAIT for one replica.
 */
class RedisClusterFailoverTest {
    @BeforeAll
    static void findTheHarness() {
        ServerOutages.script();
        RedisTestSupport.clusterUrl();
    }

    @AfterAll
    static void restoreTheCluster() {
        ServerOutages.resume("redis-cluster"); // the killed node rejoins as a replica; waits until the cluster is healthy
    }

    /** Claims one store made, and the times its claims failed. */
    private static final class Tally {
        final List<String> claimed = new ArrayList<>();
        long firstFailure;
        long lastFailure;
        int failures;

        void claim(DedupStore store, String key) {
            try {
                ClaimResult result = store.claim(key, Duration.ofMinutes(10));
                if (result instanceof Claim) {
                    claimed.add(key);
                }
            } catch (DedupStoreException e) {
                long now = System.nanoTime();
                firstFailure = failures++ == 0 ? now : firstFailure;
                lastFailure = now;
            }
        }

        long failingMillis() {
            return failures == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(lastFailure - firstFailure);
        }

        int lost(DedupStore store) {
            int lost = 0;
            for (String key : claimed) {
                // A claim that survived the failover is still there: claiming again must be a duplicate.
                if (store.claim(key, Duration.ofMinutes(10)) instanceof Claim) {
                    lost++;
                }
            }
            return lost;
        }
    }

    @Test
    @DisplayName("after a master dies, its replica takes over and claims continue; with WAIT 1 no claim is lost")
    void claimsContinueAfterFailover() throws Exception {
        String seeds = "redis-cluster://" + String.join(",", RedisTestSupport.clusterNodes());
        String run = Long.toString(System.nanoTime());
        try (DedupStore plain = DedupStores.open(seeds + "?namespace=failover-plain&timeout=500ms");
                DedupStore waiting = DedupStores.open(seeds
                        + "?namespace=failover-wait&timeout=500ms&replicas=1&replicaTimeout=500ms")) {
            Tally withoutWait = new Tally();
            Tally withWait = new Tally();
            int victimPort = anyMasterPort();
            long started = System.nanoTime();
            boolean killed = false;
            long lastFailure = System.nanoTime();
            int i = 0;
            while (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(45)) {
                if (!killed && System.nanoTime() - started > TimeUnit.SECONDS.toNanos(1)) {
                    ServerOutages.pause("redis-cluster:" + victimPort);
                    killed = true;
                }
                int failuresBefore = withoutWait.failures;
                withoutWait.claim(plain, run + "-" + i);
                withWait.claim(waiting, run + "-" + i);
                i++;
                if (withoutWait.failures > failuresBefore) {
                    lastFailure = System.nanoTime();
                }
                // Done once plain claims have run clean for 3 s after their failures began.
                if (withoutWait.failures > 0 && System.nanoTime() - lastFailure > TimeUnit.SECONDS.toNanos(3)) {
                    break;
                }
            }
            int lostWithoutWait = withoutWait.lost(plain);
            int lostWithWait = withWait.lost(waiting);
            System.out.printf("redis cluster failover (master on port %d killed): %d claim attempts each;"
                            + " without WAIT %d failed over %d ms, %d of %d claims lost;"
                            + " with WAIT 1 %d failed over %d ms (the promoted master has no replica until the old"
                            + " one rejoins), %d of %d claims lost%n",
                    victimPort, i, withoutWait.failures, withoutWait.failingMillis(), lostWithoutWait,
                    withoutWait.claimed.size(), withWait.failures, withWait.failingMillis(), lostWithWait,
                    withWait.claimed.size());

            assertThat(withoutWait.failures).as("claims on the dead master's slots failed for a while").isPositive();
            assertThat(System.nanoTime() - lastFailure).as("claims ran clean after the failover")
                    .isGreaterThan(TimeUnit.SECONDS.toNanos(3));
            assertThat(lostWithWait).as("claims acknowledged by a replica survive its promotion").isZero();

            // Once the killed node rejoins as the new master's replica, WAIT 1 succeeds on every slot again.
            ServerOutages.resume("redis-cluster");
            Tally afterRejoin = new Tally();
            for (int k = 0; k < 30; k++) {
                afterRejoin.claim(waiting, run + "-after-" + k);
            }
            assertThat(afterRejoin.claimed).as("WAIT 1 claims after the old master rejoined").hasSize(30);
        }
    }

    private static int anyMasterPort() {
        List<RedisURI> seeds = RedisTestSupport.clusterNodes().stream().map(node -> RedisURI.create("redis://" + node))
                .toList();
        RedisClusterClient client = RedisClusterClient.create(seeds);
        try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
            return connection.getPartitions().stream()
                    .filter(node -> node.is(RedisClusterNode.NodeFlag.UPSTREAM))
                    .mapToInt(node -> node.getUri().getPort())
                    .min()
                    .orElseThrow();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
