package dev.dedup.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.Settlement;
import dev.dedup.tck.FaultProxy;
import dev.dedup.tck.TestServers;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The meters of a real Redis store: every claim result, every call's outcome, store errors under a fault. */
class MeteredDedupStoreOnRedisTest {
    private static final Duration LEASE = Duration.ofMinutes(1);

    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final String namespace = "metrics-" + UUID.randomUUID().toString().substring(0, 8);
    private FaultProxy proxy;
    private DedupStore store;

    @BeforeEach
    void open() {
        URI redis = URI.create(TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", null));
        proxy = FaultProxy.start(redis.getHost(), redis.getPort());
        store = MeteredDedupStore.wrap(DedupStores.open("redis://" + proxy.host() + ":" + proxy.port()
                + "?timeout=500ms&namespace=" + namespace), registry);
    }

    @AfterEach
    void close() {
        proxy.heal();
        store.close();
        proxy.close();
    }

    private double claims(String result) {
        return registry.get("dedup.claims").tags("store", "redis", "namespace", namespace, "result", result)
                .counter().count();
    }

    private long calls(String operation, String outcome) {
        return registry.get("dedup.store.calls").tags("operation", operation, "outcome", outcome).timer().count();
    }

    @Test
    @DisplayName("claims are counted by result, and each call is timed by operation and outcome")
    void countsClaimsAndTimesCalls() {
        String done = "k-" + UUID.randomUUID();
        String failed = "k-" + UUID.randomUUID();
        Claim first = (Claim) store.claim(done, LEASE);
        store.claim(done, LEASE);
        assertThat(store.complete(first, LEASE, null)).isTrue();
        store.claim(done, LEASE);
        assertThat(store.fail((Claim) store.claim(failed, LEASE), LEASE, null)).isTrue();
        store.claimAll(List.of(failed, "k-" + UUID.randomUUID()), LEASE);
        assertThat(store.complete(first, LEASE, null)).isFalse();

        assertThat(claims("claimed")).isEqualTo(3);
        assertThat(claims("duplicate_in_progress")).isEqualTo(1);
        assertThat(claims("duplicate_completed")).isEqualTo(1);
        assertThat(claims("duplicate_failed")).isEqualTo(1);
        assertThat(calls("claim", "ok")).isEqualTo(4);
        assertThat(calls("claim_all", "ok")).isEqualTo(1);
        assertThat(calls("complete", "ok")).isEqualTo(1);
        assertThat(calls("complete", "not_owner")).isEqualTo(1);
        assertThat(calls("fail", "ok")).isEqualTo(1);
    }

    @Test
    @DisplayName("forView counts another view's calls in the same meters, and refuses a view of another namespace")
    void forViewSharesTheMeters() {
        String redis = TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", null);
        try (DedupStore view = DedupStores.open(redis + "?namespace=" + namespace);
                DedupStore other = DedupStores.open(redis + "?namespace=other-" + namespace)) {
            MeteredDedupStore metered = ((MeteredDedupStore) store).forView(view);
            String key = "k-" + UUID.randomUUID();

            assertThat(metered.complete((Claim) metered.claim(key, LEASE), LEASE, null)).isTrue();
            store.claim(key, LEASE);

            assertThat(metered.delegate()).isSameAs(view);
            assertThat(claims("claimed")).isEqualTo(1);
            assertThat(claims("duplicate_completed")).isEqualTo(1);
            assertThat(calls("complete", "ok")).isEqualTo(1);
            assertThatThrownBy(() -> ((MeteredDedupStore) store).forView(other))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'other-" + namespace + "'");
        }
    }

    @Test
    @DisplayName("async() is the store's native view, metered: the same counters and timers as the blocking calls")
    void asyncCallsAreMetered() throws Exception {
        AsyncDedupStore async = store.async();
        String key = "k-" + UUID.randomUUID();

        Claim claim = (Claim) async.claim(key, LEASE).toCompletableFuture().get(5, TimeUnit.SECONDS);
        async.claim(key, LEASE).toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(async.complete(claim, LEASE, null).toCompletableFuture().get(5, TimeUnit.SECONDS)).isTrue();
        async.claimAll(List.of(key), LEASE).toCompletableFuture().get(5, TimeUnit.SECONDS);

        assertThat(claims("claimed")).isEqualTo(1);
        assertThat(claims("duplicate_in_progress")).isEqualTo(1);
        assertThat(claims("duplicate_completed")).isEqualTo(1);
        assertThat(calls("claim", "ok")).isEqualTo(2);
        assertThat(calls("complete", "ok")).isEqualTo(1);
        assertThat(calls("claim_all", "ok")).isEqualTo(1);
    }

    @Test
    @DisplayName("a metered async claim the caller cancels reaches the store, which gives the key back once won")
    void cancellingAMeteredClaimFreesItsKey() throws Exception {
        String key;
        boolean cancelled;
        int tries = 0;
        do {   // a claim may answer before the cancel: only a cancel that won provokes the path
            key = "k-" + UUID.randomUUID();
            cancelled = store.async().claim(key, LEASE).toCompletableFuture().cancel(true);
        } while (!cancelled && ++tries < 20);
        Thread.sleep(200);

        assertThat(cancelled).as("a cancel that came before the answer, in 20 tries").isTrue();
        assertThat(store.claim(key, LEASE)).isInstanceOf(Claim.class);
        assertThat(calls("claim", "cancelled")).isEqualTo(1);
    }

    @Test
    @DisplayName("settleAll is delegated as one call, timed ok, or not_owner when any claim was lost; blocking and async")
    void timesSettleAll() throws Exception {
        Claim held = (Claim) store.claim("k-" + UUID.randomUUID(), LEASE);
        Claim other = (Claim) store.claim("k-" + UUID.randomUUID(), LEASE);
        assertThat(store.settleAll(List.of(Settlement.complete(held, LEASE, null), Settlement.release(other))))
                .containsExactly(true, true);
        assertThat(store.async().settleAll(List.of(Settlement.release(held), Settlement.release(other)))
                .toCompletableFuture().get(5, TimeUnit.SECONDS)).containsExactly(false, false);

        assertThat(calls("settle_all", "ok")).isEqualTo(1);
        assertThat(calls("settle_all", "not_owner")).isEqualTo(1);
        assertThat(registry.find("dedup.store.calls").tags("operation", "complete").timers())
                .as("no single calls behind the batch").isEmpty();
    }

    @Test
    @DisplayName("inspect and forget are delegated, and timed as ok or absent")
    void delegatesAndTimesInspectAndForget() {
        String key = "k-" + UUID.randomUUID();
        Claim claim = (Claim) store.claim(key, LEASE);

        assertThat(store.inspect(key)).hasValueSatisfying(found -> assertThat(found.owner()).isEqualTo(claim.owner()));
        assertThat(store.forget(key)).isTrue();
        assertThat(store.inspect(key)).isEmpty();
        assertThat(store.forget(key)).isFalse();

        assertThat(calls("inspect", "ok")).isEqualTo(1);
        assertThat(calls("inspect", "absent")).isEqualTo(1);
        assertThat(calls("forget", "ok")).isEqualTo(1);
        assertThat(calls("forget", "absent")).isEqualTo(1);
    }

    @Test
    @DisplayName("a store that cannot be reached is counted as a retryable error, and the error still reaches the caller")
    void countsStoreErrors() {
        store.claim("k-" + UUID.randomUUID(), LEASE);
        proxy.refuseConnections(true);
        proxy.cutConnections();

        assertThatThrownBy(() -> store.claim("k-" + UUID.randomUUID(), LEASE))
                .isInstanceOf(DedupStoreException.class);

        assertThat(calls("claim", "error_retryable")).isEqualTo(1);
        assertThat(calls("claim", "ok")).isEqualTo(1);
    }
}
