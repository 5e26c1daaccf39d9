package dev.dedup.spring.boot;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Reactive {@code @Idempotent} methods on the PostgreSQL store of the application's DataSource, in WebFlux. */
@SpringBootTest(classes = ReactiveTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive", "dedup.store.create-schema=true"})
class ReactiveIdempotentOnPostgresTest extends ReactiveIdempotentContract {

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("flux-annotation-pg"));
    }
}
