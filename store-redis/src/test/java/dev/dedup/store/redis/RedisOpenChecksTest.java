package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What the store refuses at open, on the real servers, instead of failing or losing claims later. */
class RedisOpenChecksTest {
    private static RedisClient client;
    private static StatefulRedisConnection<String, byte[]> connection;
    private static RedisCommands<String, String> admin;
    private static StatefulRedisConnection<String, String> adminConnection;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisTestSupport.standaloneUrl());
        connection = client.connect(RedisDedupStore.CODEC);
        adminConnection = client.connect();
        admin = adminConnection.sync();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        adminConnection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Test
    @DisplayName("redis:// pointed at a Cluster node fails at open and says to use redis-cluster://")
    void standaloneUriOnAClusterNodeFailsAtOpen() {
        String node = RedisTestSupport.clusterNodes().get(0);

        assertThatThrownBy(() -> DedupStores.open("redis://" + node + "?namespace=wrong-kind"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("cluster_enabled:1")
                .hasMessageContaining("redis-cluster://");
    }

    @Test
    @DisplayName("an evicting maxmemory-policy fails at open, naming it; the builder opt-in opens with a warning")
    void evictingPolicyFailsAtOpen() {
        String before = admin.configGet("maxmemory-policy").get("maxmemory-policy");
        try {
            // volatile-* evicts keys with a TTL, and every dedup key has one.
            admin.configSet("maxmemory-policy", "volatile-lru");

            assertThatThrownBy(() -> RedisDedupStore.builder(connection).namespace("evicting").build())
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("maxmemory-policy volatile-lru")
                    .hasMessageContaining("noeviction");
            assertThatThrownBy(() -> DedupStores.open(RedisTestSupport.standaloneUrl() + "?namespace=evicting"))
                    .isInstanceOf(DedupConfigurationException.class);
            RedisDedupStore accepted = RedisDedupStore.builder(connection).namespace("evicting")
                    .allowEvictingMemoryPolicy(true).build();
            assertThat(accepted.claim("k-" + System.nanoTime(), Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        } finally {
            admin.configSet("maxmemory-policy", before);
        }
    }

    @Test
    @DisplayName("the version check: this server passes; Redis 6.2 is refused, naming its version and the minimum")
    void oldVersionsAreRefused() {
        String info = admin.info("server") + admin.info("memory");
        String version = RedisServerChecks.field(info, "redis_version").orElseThrow();
        RedisServerChecks.check("test", info, false, false); // the real server, as it is

        String older = info.replace("redis_version:" + version, "redis_version:6.2.14");
        assertThatThrownBy(() -> RedisServerChecks.check("cache:6379", older, false, false))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("6.2.14")
                .hasMessageContaining("7.0 or later");
        assertThat(RedisServerChecks.atLeastMinimum("7.2.4")).isTrue();
        assertThat(RedisServerChecks.atLeastMinimum("10.0.0")).isTrue();
        assertThat(RedisServerChecks.atLeastMinimum("6.9.9")).isFalse();
        assertThat(RedisServerChecks.atLeastMinimum("garbage")).isFalse();
    }

    @Test
    @DisplayName("ERR syntax error (what Redis < 7.0 answers to SET NX GET) is permanent, not retried forever")
    void syntaxErrorsArePermanent() {
        RedisCommandExecutionException syntax = null;
        try {
            // SET ... NX GET with an option this server does not know: the same reply an old server gives.
            adminConnection.sync().dispatch(CommandType.SET, new StatusOutput<>(StringCodec.UTF8),
                    new CommandArgs<>(StringCodec.UTF8).addKey("syntax-probe").addValue("v").add("NX").add("BOGUS"));
        } catch (RedisCommandExecutionException e) {
            syntax = e;
        }
        assertThat(syntax).as("the server's reply").isNotNull().hasMessageStartingWith("ERR syntax error");

        DedupException mapped = RedisErrors.translate("claim", syntax);
        assertThat(mapped).isInstanceOf(DedupStoreException.class);
        assertThat(((DedupStoreException) mapped).isRetryable()).isFalse();
    }

    @Test
    @DisplayName("a key prefix with ':' is refused: 'a:b' + namespace 'c' would share keys with 'a' + 'b:c'")
    void prefixWithTheSeparatorIsRefused() {
        assertThatThrownBy(() -> RedisDedupStore.builder(connection).keyPrefix("svc:dedup"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no ':'");
        assertThatThrownBy(() -> DedupStores.open(RedisTestSupport.standaloneUrl() + "?prefix=svc:dedup"))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("keyPrefix");
        try (DedupStore store = DedupStores.open(RedisTestSupport.standaloneUrl() + "?prefix=svc.dedup")) {
            assertThat(store.claim("k-" + System.nanoTime(), Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }
    }
}
