package dev.dedup.spring.boot;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The WebFlux filter on the Redis store opened from {@code dedup.store.uri}: the store's own non-blocking client. */
@SpringBootTest(classes = ReactiveTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive",
                "dedup.http.paths=/payments,/flaky,/rejects,/throws,/throttled,/missing",
                "management.endpoint.health.show-details=always"})
class ReactiveIdempotencyKeyFilterOnRedisTest extends ReactiveIdempotencyKeyContract {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);   // the application's own, unused here
        registry.add("dedup.store.uri", Servers::redisUrl);
        registry.add("dedup.namespace", () -> Servers.unique("flux-redis"));
    }
}
