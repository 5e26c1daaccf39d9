package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.DedupStoreContractTest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract kit against a real standalone Redis. */
class RedisDedupStoreContractTest extends DedupStoreContractTest {
    private static RedisClient client;
    private static StatefulRedisConnection<String, byte[]> connection;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisTestSupport.standaloneUrl());
        connection = client.connect(RedisDedupStore.CODEC);
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return RedisDedupStore.builder(connection).namespace(namespace).build();
    }

    @Override
    protected String storeUri(String namespace) {
        return RedisTestSupport.standaloneUrl() + "?namespace=" + namespace;
    }
}
