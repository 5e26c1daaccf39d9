package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupStoreException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The store down: protected requests are answered 503 (fail closed), counted, and served again once it is back; an
 * {@link Idempotent} method throws the store's error without running, and runs once when the store is back.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "dedup.http.paths=/payments")
class StoreOutageOnPostgresTest extends StoreOutageContract {

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);   // the application's own, unused here
        registry.add("dedup.store.uri", StoreOutageContract::storeUri);
    }

    @Test
    void theStoreDownIs503AndTheHandlerDoesNotRunThenServesAgain() {
        failsClosedThenServesAgain(Servers.unique("down"));
    }

    @Autowired
    Billing billing;

    @Test
    void anIdempotentMethodWithTheStoreDownThrowsTheStoreErrorWithoutRunningThenRunsOnceItIsBack() {
        String id = Servers.unique("down-order");

        storeDown();
        assertThatThrownBy(() -> billing.charge(new Billing.Order(id, 100)))
                .isInstanceOfSatisfying(DedupStoreException.class,
                        failure -> assertThat(failure.getMessage()).doesNotContain("password"));
        assertThat(billing.runs(id)).isZero();

        PROXY.heal();
        assertThat(billing.charge(new Billing.Order(id, 100)).run()).isEqualTo(1);
        assertThat(billing.charge(new Billing.Order(id, 100)).run()).isEqualTo(1);
        assertThat(billing.runs(id)).isEqualTo(1);
    }
}
