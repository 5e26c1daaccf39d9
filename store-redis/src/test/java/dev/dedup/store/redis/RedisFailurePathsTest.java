package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStoreException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A batch that fails part-way and a store closed by many threads at once, on the real server. */
class RedisFailurePathsTest {
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

    @Test
    @DisplayName("a claimAll that fails on one key gives back the keys it won, and says none may stay held")
    void failedBatchReleasesTheKeysItWon() {
        RedisDedupStore store = RedisDedupStore.builder(connection)
                .namespace("batch-" + UUID.randomUUID().toString().substring(0, 8)).build();
        redis.lpush(store.redisKey("a-list"), new byte[] {1}); // WRONGTYPE for the claim script

        assertThatThrownBy(() -> store.claimAll(List.of("first", "a-list", "last"), Duration.ofMinutes(5)))
                .isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("claimAll of 3 keys failed")
                .hasMessageContaining("may stay held until their lease ends: none");

        assertThat(redis.exists(store.redisKey("first"), store.redisKey("last"))).as("keys the batch had won")
                .isZero();
        assertThat(store.claim("first", Duration.ofMinutes(5))).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("close() from many threads at once closes once")
    void concurrentCloseClosesOnce() throws Exception {
        for (int round = 0; round < 100; round++) {
            AtomicInteger closes = new AtomicInteger();
            RedisDedupStore store = RedisDedupStore.builder(connection).namespace("close")
                    .onClose(closes::incrementAndGet).build();
            CyclicBarrier start = new CyclicBarrier(8);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                Thread thread = new Thread(() -> {
                    try {
                        start.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    store.close();
                });
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                thread.join();
            }
            assertThat(closes).as("doClose runs in round " + round).hasValue(1);
        }
    }
}
