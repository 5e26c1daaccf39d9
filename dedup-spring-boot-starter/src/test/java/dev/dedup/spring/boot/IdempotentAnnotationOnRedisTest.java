package dev.dedup.spring.boot;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link Idempotent} methods on the Redis store opened from {@code dedup.store.uri}. */
@SpringBootTest(classes = TestApplication.class)
class IdempotentAnnotationOnRedisTest extends IdempotentAnnotationContract {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.store.uri", Servers::redisUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-ann-redis"));
    }
}
