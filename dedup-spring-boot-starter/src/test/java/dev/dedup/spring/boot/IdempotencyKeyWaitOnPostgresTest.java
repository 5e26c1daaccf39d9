package dev.dedup.spring.boot;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The servlet filter's opt-ins on PostgreSQL. */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dedup.http.paths=/payments,/async/**", "dedup.store.create-schema=true",
                "dedup.http.in-progress-wait=2s", "dedup.retention=1h", "dedup.http.retention-by-path.[/payments]=7d",
                "dedup.http.key-required=false"})
class IdempotencyKeyWaitOnPostgresTest extends FilterOptInsContract {

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-wait"));
    }
}
