package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The optional WAIT after each claim: it passes where replicas exist and fails (and frees the key) where not. */
class RedisReplicationTest {

    @Test
    @DisplayName("without replicas, a claim that must reach one fails retryably and leaves the key free")
    void standaloneHasNoReplica() {
        try (DedupStore store = DedupStores.open(RedisTestSupport.standaloneUrl()
                + "?namespace=wait-none&replicas=1&replicaTimeout=50ms")) {
            String key = "k-" + System.nanoTime();

            assertThatThrownBy(() -> store.claim(key, Duration.ofMinutes(1)))
                    .isInstanceOf(DedupStoreException.class)
                    .hasMessageContaining("reached 0 of 1 replicas");

            try (DedupStore plain = DedupStores.open(RedisTestSupport.standaloneUrl() + "?namespace=wait-none")) {
                assertThat(plain.claim(key, Duration.ofMinutes(1))).isInstanceOf(Claim.class);
            }
        }
    }

    @Test
    @DisplayName("on the Cluster, claims that wait for one replica succeed, singly and in batches")
    void clusterReplicatesEveryClaim() {
        String uri = "redis-cluster://" + String.join(",", RedisTestSupport.clusterNodes())
                + "?namespace=wait-one&replicas=1&replicaTimeout=1s";
        try (DedupStore store = DedupStores.open(uri)) {
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                keys.add("k-" + System.nanoTime() + "-" + i);
            }
            for (String key : keys.subList(0, 25)) {
                assertThat(store.claim(key, Duration.ofMinutes(1))).isInstanceOf(Claim.class);
            }
            assertThat(store.claimAll(keys.subList(25, 50), Duration.ofMinutes(1)))
                    .allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
        }
    }
}
