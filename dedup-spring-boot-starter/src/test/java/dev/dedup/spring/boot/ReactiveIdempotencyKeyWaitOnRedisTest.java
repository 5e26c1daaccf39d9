package dev.dedup.spring.boot;

import org.junit.jupiter.api.BeforeAll;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The WebFlux filter's opt-ins on Redis: the in-progress wait runs on a timer, holding no thread. */
@SpringBootTest(classes = ReactiveTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive", "dedup.http.paths=/payments",
                "dedup.http.in-progress-wait=2s", "dedup.retention=1h", "dedup.http.retention-by-path.[/payments]=7d",
                "dedup.http.key-required=false"})
class ReactiveIdempotencyKeyWaitOnRedisTest extends FilterOptInsContract {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);   // the application's own, unused here
        registry.add("dedup.store.uri", Servers::redisUrl);
        registry.add("dedup.namespace", () -> Servers.unique("flux-wait"));
    }

    @BeforeAll
    static void blockingCheck() {
        BlockingCheck.install();
    }
}
