package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The WebFlux filter on the PostgreSQL store built on the application's DataSource: a store whose client blocks, so
 * its calls run on the starter's own threads, never on the event loop.
 */
@SpringBootTest(classes = ReactiveTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive", "dedup.store.create-schema=true",
                "dedup.http.paths=/payments,/flaky,/rejects,/throws,/throttled,/missing",
                "management.endpoint.health.show-details=always"})
class ReactiveIdempotencyKeyFilterOnPostgresTest extends ReactiveIdempotencyKeyContract {

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("flux-pg"));
    }

    @Autowired
    ApplicationContext context;

    @Autowired
    DedupStore store;

    @Test
    void theReactiveFilterIsTheOneInstalled() {
        assertThat(context.getBeansOfType(ReactiveIdempotencyKeyFilter.class)).hasSize(1);
        assertThat(context.getBeansOfType(IdempotencyKeyFilter.class)).isEmpty();
        assertThat(store.namespace()).startsWith("flux-pg-");
    }
}
