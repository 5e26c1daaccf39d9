package dev.dedup.spring.boot;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Reactive {@code @Idempotent} methods on the Redis store, in a WebFlux application. */
@SpringBootTest(classes = ReactiveTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.main.web-application-type=reactive")
class ReactiveIdempotentOnRedisTest extends ReactiveIdempotentContract {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);   // the application's own, unused here
        registry.add("dedup.store.uri", Servers::redisUrl);
        registry.add("dedup.namespace", () -> Servers.unique("flux-annotation-redis"));
    }
}
