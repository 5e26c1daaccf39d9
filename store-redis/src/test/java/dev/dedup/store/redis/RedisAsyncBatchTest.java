package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The async {@code claimAll} on the real server: one batch script, as the blocking batch sends, and its failures. */
class RedisAsyncBatchTest {
    private static final Duration LEASE = Duration.ofMinutes(5);
    private static final Pattern CALLS = Pattern.compile("cmdstat_(?:evalsha|eval):calls=(\\d+)");

    private static RedisClient client;
    private static StatefulRedisConnection<String, byte[]> connection;
    private static RedisCommands<String, byte[]> redis;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisTestSupport.standaloneUrl());
        connection = client.connect(RedisDedupStore.CODEC);
        redis = connection.sync();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private static RedisDedupStore newStore() {
        return RedisDedupStore.builder(connection).namespace("abatch-" + UUID.randomUUID().toString().substring(0, 8))
                .build();
    }

    @Test
    @DisplayName("an async claimAll of 100 keys runs one script on the server, and a second finds them all taken")
    void oneScriptPerBatch() {
        RedisDedupStore store = newStore();
        store.async().claimAll(List.of("warm-up-1", "warm-up-2"), LEASE).toCompletableFuture().join(); // caches it
        List<String> keys = IntStream.range(0, 100).mapToObj(i -> "key-" + i).toList();

        long before = scriptCalls();
        List<ClaimResult> first = store.async().claimAll(keys, LEASE).toCompletableFuture().join();
        long scripts = scriptCalls() - before;
        List<ClaimResult> second = store.async().claimAll(keys, LEASE).toCompletableFuture().join();

        assertThat(scripts).as("scripts the server ran for the batch").isEqualTo(1);
        assertThat(first).hasSize(100).allMatch(Claim.class::isInstance);
        assertThat(first).extracting(ClaimResult::key).containsExactlyElementsOf(keys);
        assertThat(second).hasSize(100).allMatch(Duplicate.class::isInstance);
    }

    @Test
    @DisplayName("an async claimAll whose script stops at a key of another type gives back the keys it won")
    void failedBatchReleasesTheKeysItWon() {
        RedisDedupStore store = newStore();
        redis.lpush(store.redisKey("a-list"), new byte[] {1}); // WRONGTYPE for the claim script, mid-batch

        assertThatThrownBy(() -> store.async().claimAll(List.of("first", "a-list", "last"), LEASE)
                .toCompletableFuture().join())
                .isInstanceOf(CompletionException.class)
                .cause().isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("claimAll of 3 keys failed");

        assertThat(redis.exists(store.redisKey("first"), store.redisKey("last"))).as("keys the batch had won")
                .isZero();
        assertThat(store.async().claim("last", LEASE).toCompletableFuture().join()).isInstanceOf(Claim.class);
    }

    /** The server's count of script calls (EVALSHA and EVAL) since its start. */
    private static long scriptCalls() {
        Matcher calls = CALLS.matcher(redis.info("commandstats"));
        long total = 0;
        while (calls.find()) {
            total += Long.parseLong(calls.group(1));
        }
        return total;
    }
}
