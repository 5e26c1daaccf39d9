package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.micrometer.MeteredDedupStore;
import dev.dedup.store.postgres.PostgresDedupStore;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The filter on the PostgreSQL store that the starter builds on the application's own DataSource. */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dedup.http.paths=/payments,/flaky,/rejects,/throws,/throttled,/missing,/async/**,/large", "dedup.store.create-schema=true",
                "management.endpoint.health.show-details=always"})
class IdempotencyKeyFilterOnPostgresTest extends IdempotencyKeyContract {

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-pg"));
    }

    @Autowired
    DedupStore store;

    @Test
    void theStoreIsBuiltOnTheApplicationsDataSource() {
        // With Micrometer in the application, the starter meters the store it built.
        assertThat(store).isInstanceOf(MeteredDedupStore.class);
        assertThat(((MeteredDedupStore) store).delegate()).isInstanceOf(PostgresDedupStore.class);
        assertThat(store.namespace()).startsWith("boot-pg-");
    }
}
