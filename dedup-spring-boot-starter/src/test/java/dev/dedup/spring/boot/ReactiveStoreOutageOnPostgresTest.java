package dev.dedup.spring.boot;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The WebFlux filter when its PostgreSQL store cannot be reached: 503, fail closed, then served again. */
@SpringBootTest(classes = ReactiveTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive", "dedup.http.paths=/payments"})
class ReactiveStoreOutageOnPostgresTest extends StoreOutageContract {

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);   // the application's own, unused here
        registry.add("dedup.store.uri", StoreOutageContract::storeUri);
    }

    @BeforeAll
    static void blockingCheck() {
        BlockingCheck.install();
    }

    @Test
    void theStoreDownIs503AndTheHandlerDoesNotRunThenServesAgain() {
        failsClosedThenServesAgain(Servers.unique("flux-down"));
    }
}
