package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStoreException;
import dev.dedup.tck.FaultProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The async API does not block its caller: with every reply held back at a proxy, one thread issues 64 claims and
 * gets 64 pending stages back, which all complete once the replies pass.
 */
class RedisAsyncInFlightTest {
    private static final int IN_FLIGHT = 64;
    private static final Duration LEASE = Duration.ofSeconds(30);

    private FaultProxy proxy;
    private RedisClient client;
    private StatefulRedisConnection<String, byte[]> connection;
    private RedisDedupStore store;

    @BeforeEach
    void open() {
        URI server = URI.create(RedisTestSupport.standaloneUrl());
        proxy = FaultProxy.start(server.getHost(), server.getPort());
        client = RedisClient.create("redis://" + proxy.host() + ":" + proxy.port());
        connection = client.connect(RedisDedupStore.CODEC);
        store = RedisDedupStore.builder(connection).namespace("inflight-" + UUID.randomUUID().toString().substring(0, 8))
                .timeout(Duration.ofSeconds(30)).build();
        // Load the script (NOSCRIPT path) before replies are held, so the held replies are the claims' own.
        store.async().claim("warm-up", LEASE).toCompletableFuture().join();
    }

    @AfterEach
    void close() {
        store.close();
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        proxy.close();
    }

    @Test
    @DisplayName("one thread issues 64 claims while no reply can arrive; all 64 complete once replies pass")
    void issuesSixtyFourClaimsWithoutWaiting() {
        // Held far longer than issuing 64 calls takes: a call that waited for its reply could not have returned.
        proxy.delayReplies(Duration.ofSeconds(3));
        AsyncDedupStore async = store.async();
        List<CompletableFuture<ClaimResult>> pending = new ArrayList<>();
        for (int i = 0; i < IN_FLIGHT; i++) {
            pending.add(async.claim("k-" + i, LEASE).toCompletableFuture());
        }

        assertThat(pending).as("stages returned before any reply passed the proxy").noneMatch(CompletableFuture::isDone);

        proxy.delayReplies(Duration.ZERO);
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
        assertThat(pending).allSatisfy(stage -> assertThat(stage.join()).isInstanceOf(Claim.class));
        assertThat(pending.stream().map(stage -> ((Claim) stage.join()).owner()).distinct()).hasSize(IN_FLIGHT);
    }

    @Test
    @DisplayName("bad input throws at the call; a failure of the server fails the stage with DedupStoreException")
    void argumentsThrowAtTheCallAndFailuresFailTheStage() {
        AsyncDedupStore async = store.async();
        assertThatThrownBy(() -> async.claim("", LEASE)).isInstanceOf(IllegalArgumentException.class);

        // A value of another type under the store's key: the script's error, mapped as the blocking call maps it.
        connection.sync().hset(store.redisKey("wrong-type"), "field", new byte[] {1});
        CompletableFuture<ClaimResult> claim = async.claim("wrong-type", LEASE).toCompletableFuture();

        assertThatThrownBy(claim::join).isInstanceOf(CompletionException.class)
                .cause().isInstanceOf(DedupStoreException.class);
        assertThatThrownBy(() -> store.claim("wrong-type", LEASE)).isInstanceOf(DedupStoreException.class)
                .hasMessage(claim.handle((ok, failure) -> failure.getMessage()).join());
    }
}
