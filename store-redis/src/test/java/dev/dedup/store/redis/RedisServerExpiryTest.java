package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Claims that Redis runs later than the client sent them (CLIENT PAUSE holds every command on the real server):
 * the expiry each result reports is the one the server enforces, never one already past.
 */
class RedisServerExpiryTest {
    private static final Duration LEASE = Duration.ofSeconds(10);
    private static final long PAUSE_MILLIS = 1_500;
    private static final Duration TOLERANCE = Duration.ofMillis(50);

    private static RedisClient client;
    private static StatefulRedisConnection<String, byte[]> storeConnection;
    private static StatefulRedisConnection<String, byte[]> adminConnection;
    private static RedisCommands<String, byte[]> admin;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisTestSupport.standaloneUrl());
        storeConnection = client.connect(RedisDedupStore.CODEC);
        adminConnection = client.connect(RedisDedupStore.CODEC);
        admin = adminConnection.sync();
    }

    @AfterAll
    static void disconnect() {
        storeConnection.close();
        adminConnection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private static RedisDedupStore store(Duration timeout) {
        return RedisDedupStore.builder(storeConnection).namespace("expiry-" + UUID.randomUUID().toString()
                .substring(0, 8)).timeout(timeout).build();
    }

    /** When the server will expire the key, by its PTTL, in this JVM's clock. */
    private static Instant serverExpiry(String redisKey) {
        Instant now = Instant.now();
        return now.plusMillis(admin.pttl(redisKey));
    }

    @Test
    @DisplayName("a claim the server runs late reports the expiry the server enforces, not send time + lease")
    void lateClaimReportsTheServersExpiry() {
        RedisDedupStore store = store(Duration.ofSeconds(5));
        String key = "late-" + UUID.randomUUID();

        admin.clientPause(PAUSE_MILLIS);
        Claim claim = (Claim) store.claim(key, LEASE);

        assertThat(claim.expiresAt()).as("the claim's reported expiry")
                .isAfterOrEqualTo(serverExpiry(store.redisKey(key)).minus(TOLERANCE));
    }

    @Test
    @DisplayName("a claim that timed out and ran later: every duplicate reports the expiry the server enforces")
    void duplicatesOfALateClaimReportTheServersExpiry() throws InterruptedException {
        RedisDedupStore timedOut = store(Duration.ofMillis(300));
        RedisDedupStore other = RedisDedupStore.builder(storeConnection).namespace(timedOut.namespace()).build();
        String key = "timed-out-" + UUID.randomUUID();

        admin.clientPause(PAUSE_MILLIS);
        assertThatThrownBy(() -> timedOut.claim(key, LEASE)).isInstanceOf(DedupStoreException.class);
        Thread.sleep(PAUSE_MILLIS); // the server runs the claim when the pause ends

        Duplicate duplicate = (Duplicate) other.claim(key, LEASE);
        Instant enforced = serverExpiry(timedOut.redisKey(key));
        assertThat(duplicate.expiresAt()).as("a duplicate's reported expiry")
                .isAfterOrEqualTo(enforced.minus(TOLERANCE))
                .isBeforeOrEqualTo(enforced.plus(TOLERANCE));
    }
}
