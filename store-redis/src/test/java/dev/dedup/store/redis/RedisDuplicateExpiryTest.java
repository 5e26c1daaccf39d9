package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.tck.BlockingOverAsync;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A duplicate reports the live record's expiry to the millisecond: exactly what the claim that made it reported,
 * by {@code claim} and {@code claimAll}, blocking and async, standalone and Cluster. Many keys, since a clock read
 * off by one millisecond shows only when a millisecond ticks over inside a script.
 */
class RedisDuplicateExpiryTest {
    private static final Duration LEASE = Duration.ofMinutes(1);
    private static final int KEYS = 100;

    static Stream<Arguments> stores() {
        String cluster = "redis-cluster://" + String.join(",", RedisTestSupport.clusterNodes());
        return Stream.of(Arguments.of("standalone", RedisTestSupport.standaloneUrl(), false),
                Arguments.of("standalone, async", RedisTestSupport.standaloneUrl(), true),
                Arguments.of("Cluster", cluster, false),
                Arguments.of("Cluster, async", cluster, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void aDuplicateReportsExactlyTheClaimsExpiry(String name, String url, boolean async) {
        try (DedupStore opened = DedupStores.open(url + "?namespace=expiry-" + UUID.randomUUID().toString()
                .substring(0, 8))) {
            DedupStore store = async ? BlockingOverAsync.of(opened) : opened;
            List<String> keys = IntStream.range(0, KEYS).mapToObj(i -> "k-" + UUID.randomUUID()).toList();
            for (String key : keys) {
                Claim claim = (Claim) store.claim(key, LEASE);
                assertThat(((Duplicate) store.claim(key, LEASE)).expiresAt()).as("claim's duplicate of %s", key)
                        .isEqualTo(claim.expiresAt());
            }

            List<String> batch = IntStream.range(0, KEYS).mapToObj(i -> "b-" + UUID.randomUUID()).toList();
            List<ClaimResult> claims = store.claimAll(batch, LEASE);
            List<ClaimResult> duplicates = store.claimAll(batch, LEASE);
            for (int i = 0; i < KEYS; i++) {
                assertThat(((Duplicate) duplicates.get(i)).expiresAt()).as("claimAll's duplicate of %s", batch.get(i))
                        .isEqualTo(((Claim) claims.get(i)).expiresAt());
            }
        }
    }
}
