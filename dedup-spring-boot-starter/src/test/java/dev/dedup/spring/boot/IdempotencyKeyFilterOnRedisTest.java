package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.micrometer.MeteredDedupStore;
import dev.dedup.store.redis.RedisDedupStore;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The filter on the Redis store opened from {@code dedup.store.uri}, which wins over the application's DataSource.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dedup.http.paths=/payments,/flaky,/rejects,/throws,/throttled,/missing,/async/**,/large", "management.endpoint.health.show-details=always"})
class IdempotencyKeyFilterOnRedisTest extends IdempotencyKeyContract {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.store.uri", Servers::redisUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-redis"));
    }

    @Autowired
    DedupStore store;

    @Test
    void theUriWinsOverTheDataSource() {
        // With Micrometer in the application, the starter meters the store it built.
        assertThat(store).isInstanceOf(MeteredDedupStore.class);
        assertThat(((MeteredDedupStore) store).delegate()).isInstanceOf(RedisDedupStore.class);
        assertThat(store.namespace()).startsWith("boot-redis-");
    }
}
