package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.tck.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An async call waiting for its resend when the store closes: closing a store opened by URI shuts its client's
 * resources down, timer included, and the timer's pending resend and deadline never fire. The stage must still end.
 */
class RedisAsyncCloseTest {
    private FaultProxy proxy;
    private DedupStore store;

    @BeforeEach
    void open() {
        URI server = URI.create(RedisTestSupport.standaloneUrl());
        proxy = FaultProxy.start(server.getHost(), server.getPort());
        // A long timeout: without its deadline firing, the call would resend for 30 s.
        store = DedupStores.open("redis://" + proxy.host() + ":" + proxy.port() + "?timeout=30s&namespace=close-"
                + UUID.randomUUID().toString().substring(0, 8));
    }

    @AfterEach
    void close() {
        store.close();
        proxy.close();
    }

    @Test
    @DisplayName("a claim resending after a lost reply fails with a store error when the store closes, not never")
    void aCallWaitingForItsResendFailsWhenTheStoreCloses() throws Exception {
        store.claim("warm-" + UUID.randomUUID(), Duration.ofMinutes(1)); // connected
        proxy.refuseConnections(true);
        proxy.loseNextReply();

        CompletableFuture<ClaimResult> stage = store.async().claim("k-" + UUID.randomUUID(), Duration.ofMinutes(1))
                .toCompletableFuture();
        long lostBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (proxy.lostReplies() == 0 && System.nanoTime() < lostBy) {
            Thread.sleep(10);
        }
        Thread.sleep(100); // resends refused while the server is away, each after a pause on the client's timer
        assertThat(stage).as("the claim, resending while the server is away").isNotDone();

        store.close();

        assertThatThrownBy(() -> stage.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(DedupStoreException.class);
    }
}
