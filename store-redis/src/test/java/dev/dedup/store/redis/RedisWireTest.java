package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.Arrays;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What the store leaves in Redis: key layout, server-side expiry set with the value, the record's encoding. */
class RedisWireTest {
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

    private static String namespace() {
        return "wire-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @DisplayName("a claim writes prefix:namespace:key with its expiry in the same command (PTTL = lease)")
    void claimSetsValueAndExpiryTogether() {
        String namespace = namespace();
        RedisDedupStore store = RedisDedupStore.builder(connection).namespace(namespace).build();

        Claim claim = (Claim) store.claim("order-1", Duration.ofSeconds(30));

        String key = "dedup:" + namespace + ":order-1";
        assertThat(store.redisKey("order-1")).isEqualTo(key);
        assertThat(redis.pttl(key)).isBetween(29_000L, 30_000L);
        byte[] value = redis.get(key);
        assertThat(value[0]).isEqualTo((byte) 'P');
        assertThat(new String(value, 9, 36)).isEqualTo(claim.owner());
    }

    @Test
    @DisplayName("a fingerprint follows the owner (flag 2, length, bytes); complete keeps it before the result (flag 3)")
    void fingerprintLayout() {
        String namespace = namespace();
        RedisDedupStore store = RedisDedupStore.builder(connection).namespace(namespace).build();
        byte[] fingerprint = {0, 7, (byte) 0xff};

        Claim claim = (Claim) store.claim("order-1", Duration.ofSeconds(30), fingerprint);
        byte[] claimed = redis.get(store.redisKey("order-1"));
        store.complete(claim, Duration.ofMinutes(5), new byte[] {42});
        byte[] completed = redis.get(store.redisKey("order-1"));

        assertThat(claimed).hasSize(45 + 1 + 1 + 3);
        assertThat(Arrays.copyOfRange(claimed, 45, claimed.length)).containsExactly(2, 3, 0, 7, 0xff);
        assertThat(completed[0]).isEqualTo((byte) 'C');
        assertThat(Arrays.copyOfRange(completed, 45, completed.length)).containsExactly(3, 3, 0, 7, 0xff, 42);

        // A record written before fingerprints (flag 1, then the result) reads as before, without a fingerprint.
        byte[] legacy = Arrays.copyOf(completed, 47);
        legacy[45] = 1;
        legacy[46] = 99;
        redis.set(store.redisKey("legacy"), legacy);
        Duplicate old = (Duplicate) store.claim("legacy", Duration.ofSeconds(30), fingerprint);
        assertThat(old.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(old.result()).hasValueSatisfying(result -> assertThat(result).containsExactly(99));
        assertThat(old.fingerprint()).isEmpty();
        RedisRecord decoded = RedisRecord.decode(completed);
        assertThat(decoded.fingerprint()).containsExactly(0, 7, 0xff);
        assertThat(decoded.result()).containsExactly(42);
    }

    @Test
    @DisplayName("complete replaces the record and its expiry atomically (PTTL = retention); release deletes it")
    void completeAndReleaseRewriteTheKey() {
        RedisDedupStore store = RedisDedupStore.builder(connection).namespace(namespace()).build();
        Claim done = (Claim) store.claim("done", Duration.ofSeconds(30));
        Claim dropped = (Claim) store.claim("dropped", Duration.ofSeconds(30));

        assertThat(store.complete(done, Duration.ofHours(2), new byte[] {42})).isTrue();
        assertThat(store.release(dropped)).isTrue();

        assertThat(redis.pttl(store.redisKey("done"))).isBetween(7_199_000L, 7_200_000L);
        assertThat(redis.get(store.redisKey("done"))[0]).isEqualTo((byte) 'C');
        assertThat(redis.exists(store.redisKey("dropped"))).isZero();
    }

    @Test
    @DisplayName("a custom prefix and a hash-tagged namespace put all of a namespace's keys in one slot")
    void hashTagColocatesANamespace() {
        String namespace = namespace();
        RedisDedupStore store = RedisDedupStore.builder(connection).namespace(namespace).keyPrefix("svc.dedup")
                .hashTagNamespace(true).build();

        assertThat(store.redisKey("{user}:1")).isEqualTo("svc.dedup:{" + namespace + "}:{user}:1");
        assertThat(SlotHash.getSlot(store.redisKey("a"))).isEqualTo(SlotHash.getSlot(store.redisKey("zz{x}")));
        assertThat(store.claim("{user}:1", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        assertThatThrownBy(() -> RedisDedupStore.builder(connection).keyPrefix("bad prefix"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'bad prefix'");
    }

    @Test
    @DisplayName("a foreign value under the prefix is a configuration error, not a silent duplicate")
    void foreignValuesAreReported() {
        RedisDedupStore store = RedisDedupStore.builder(connection).namespace(namespace()).build();
        redis.set(store.redisKey("taken"), "not ours".getBytes());

        assertThatThrownBy(() -> store.claim("taken", Duration.ofSeconds(5)))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("not a dedup record");
    }

    @Test
    @DisplayName("a wrong-typed key is a permanent DedupStoreException with the cause attached")
    void wrongTypeIsPermanent() {
        RedisDedupStore store = RedisDedupStore.builder(connection).namespace(namespace()).build();
        redis.lpush(store.redisKey("list"), new byte[] {1});
        Claim claim = (Claim) store.claim("other", Duration.ofSeconds(5));

        assertThatThrownBy(() -> store.claim("list", Duration.ofSeconds(5)))
                .isInstanceOf(DedupStoreException.class)
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isFalse())
                .hasCauseInstanceOf(io.lettuce.core.RedisCommandExecutionException.class);
        assertThat(store.complete(claim, Duration.ofSeconds(5), null)).isTrue();
    }

    @Test
    @DisplayName("URI parameters are checked: a bad prefix or replica count names the parameter")
    void uriParametersAreChecked() {
        assertThatThrownBy(() -> DedupStores.open(RedisTestSupport.standaloneUrl() + "?prefix=a%20b"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("keyPrefix");
        assertThatThrownBy(() -> DedupStores.open(RedisTestSupport.standaloneUrl() + "?replicas=many"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("many");
    }
}
