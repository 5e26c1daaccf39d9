package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.tck.FaultProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code settleAll} on the real standalone Redis, blocking; and, through a {@link FaultProxy}, that a batch is one
 * round trip and that a lost or missing reply ends in bounded time.
 */
class RedisSettleAllTest extends RedisSettleAllContract {

    @Override
    DedupStore openStore(String namespace) {
        return wrap(DedupStores.open(RedisTestSupport.standaloneUrl() + "?namespace=" + namespace));
    }

    @Override
    DedupStore openWitness(String namespace) {
        return DedupStores.open(RedisTestSupport.standaloneUrl() + "?namespace=" + namespace);
    }

    /** The store under test behind {@code proxy}, with {@code timeout}. */
    private DedupStore openVia(FaultProxy proxy, String timeout) {
        return wrap(DedupStores.open("redis://" + proxy.host() + ":" + proxy.port() + "?namespace="
                + witness.namespace() + "&timeout=" + timeout));
    }

    /** The path under test on a store just opened: the store itself here, its async view in a subclass. */
    DedupStore wrap(DedupStore opened) {
        return opened;
    }

    private static FaultProxy proxyToTheServer() {
        URI server = URI.create(RedisTestSupport.standaloneUrl());
        return FaultProxy.start(server.getHost(), server.getPort());
    }

    @Test
    @DisplayName("a batch is one round trip: under a 300 ms delay on every reply, 40 settle in about one delay")
    void batchIsOneRoundTrip() {
        Duration delay = Duration.ofMillis(300);
        try (FaultProxy proxy = proxyToTheServer(); DedupStore slow = openVia(proxy, "10s")) {
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 43; i++) {
                keys.add(newKey());
            }
            List<Claim> claims = witness.claimAll(keys, LEASE).stream().map(Claim.class::cast).toList();
            slow.inspect(newKey()); // connected before the clock starts
            proxy.delayReplies(delay);

            long singles = System.nanoTime();
            for (Claim claim : claims.subList(40, 43)) {
                assertThat(slow.complete(claim, RETENTION, null)).isTrue();
            }
            Duration threeSingles = Duration.ofNanos(System.nanoTime() - singles);
            long batch = System.nanoTime();
            List<Boolean> answers = slow.settleAll(claims.subList(0, 40).stream()
                    .map(claim -> Settlement.complete(claim, RETENTION, null)).toList());
            Duration fortyInOne = Duration.ofNanos(System.nanoTime() - batch);

            assertThat(answers).hasSize(40).containsOnly(true);
            assertThat(threeSingles).as("three single completes: three delayed replies")
                    .isGreaterThanOrEqualTo(delay.multipliedBy(3));
            assertThat(fortyInOne).as("40 settlements in one batch: one delayed reply, not 40")
                    .isLessThan(delay.multipliedBy(3));
            proxy.heal();
        }
    }

    @Test
    @DisplayName("a batch whose replies stop coming fails with a DedupStoreException within the timeout, no hang")
    void unansweredBatchFailsTyped() {
        try (FaultProxy proxy = proxyToTheServer(); DedupStore slow = openVia(proxy, "500ms")) {
            List<Claim> claims = witness.claimAll(List.of(newKey(), newKey()), LEASE).stream()
                    .map(Claim.class::cast).toList();
            slow.inspect(newKey());
            proxy.delayReplies(Duration.ofSeconds(5));

            long started = System.nanoTime();
            assertThatThrownBy(() -> slow.settleAll(List.of(Settlement.complete(claims.get(0), RETENTION, null),
                    Settlement.release(claims.get(1))))).isInstanceOf(DedupStoreException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
            proxy.heal();
        }
    }

    @Test
    @DisplayName("a key overwritten with another type stops the batch's script there: a permanent, typed failure")
    void wrongTypedKeyFailsTheBatchTyped() {
        List<Claim> claims = witness.claimAll(List.of(newKey(), newKey(), newKey()), LEASE).stream()
                .map(Claim.class::cast).toList();
        RedisClient client = RedisClient.create(RedisTestSupport.standaloneUrl());
        try (StatefulRedisConnection<String, byte[]> raw = client.connect(RedisDedupStore.CODEC)) {
            String redisKey = ((RedisDedupStore) witness).redisKey(claims.get(1).key());
            raw.sync().del(redisKey);
            raw.sync().lpush(redisKey, new byte[] {1}); // an operator's write over the claim

            assertThatThrownBy(() -> store.settleAll(claims.stream()
                    .map(claim -> Settlement.complete(claim, RETENTION, null)).toList()))
                    .isInstanceOf(DedupStoreException.class)
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isFalse());
            assertThat(witness.inspect(claims.get(0).key()).orElseThrow().state()).as("settled before the stop")
                    .isEqualTo(RecordState.COMPLETED);
            assertThat(witness.inspect(claims.get(2).key()).orElseThrow().state()).as("not reached: lapses")
                    .isEqualTo(RecordState.IN_PROGRESS);
            raw.sync().del(redisKey);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    @DisplayName("a batch whose reply is lost is resent and answers each settlement by what the lost attempt did")
    void lostReplyAnswersWhatTheLostAttemptDid() {
        try (FaultProxy proxy = proxyToTheServer(); DedupStore faulty = openVia(proxy, "2s")) {
            List<Claim> claims = witness.claimAll(List.of(newKey(), newKey(), newKey()), LEASE).stream()
                    .map(Claim.class::cast).toList();
            faulty.inspect(newKey());
            proxy.loseNextReply();

            List<Boolean> answers = faulty.settleAll(List.of(
                    Settlement.complete(claims.get(0), RETENTION, "r".getBytes()),
                    Settlement.fail(claims.get(1), RETENTION, "e".getBytes()), Settlement.release(claims.get(2))));

            assertThat(proxy.lostReplies()).as("a reply was really lost").isEqualTo(1);
            assertThat(answers).containsExactly(true, true, true);
            assertThat(witness.inspect(claims.get(0).key()).orElseThrow().result()).isEqualTo("r".getBytes());
            assertThat(witness.inspect(claims.get(1).key()).orElseThrow().state()).isEqualTo(RecordState.FAILED);
            assertThat(witness.inspect(claims.get(2).key())).isEmpty();
        }
    }
}
