package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.spring.boot.Billing.Order;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link Idempotent} methods on the PostgreSQL store built on the application's DataSource, metered. */
@SpringBootTest(classes = {TestApplication.class, IdempotentAnnotationOnPostgresTest.Transactions.class},
        properties = "dedup.store.create-schema=true")
class IdempotentAnnotationOnPostgresTest extends IdempotentAnnotationContract {

    @Configuration
    static class Transactions {
        @Bean
        Ledger ledger(JdbcTemplate jdbc, Billing billing) {
            return new Ledger(jdbc, billing);
        }
    }

    @Autowired
    Ledger ledger;

    @Test
    void aCallInARolledBackTransactionFreesItsKeySoTheRetryRunsAgain() {
        String id = id();

        assertThatThrownBy(() -> ledger.book(id, true)).hasMessage("rolled back after the capture");
        String booked = ledger.book(id, false);

        assertThat(booked).isEqualTo("capture 2");   // the first capture rolled back: not replayed
        assertThat(billing.capture(id)).isEqualTo("capture 2");   // the committed one is
        assertThat(ledger.entries(id)).isEqualTo(1);
        assertThat(billing.runs("capture-" + id)).isEqualTo(2);
    }

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-ann-pg"));
    }

    @Test
    void theSameKeyTwiceInOneTransactionRunsOnceAndReturnsTheFirstResult() {
        String id = id();

        assertThat(ledger.bookTwice(id)).isEqualTo("capture 1/capture 1");
        assertThat(billing.capture(id)).isEqualTo("capture 1");   // committed: replayed
        assertThat(billing.runs("capture-" + id)).isEqualTo(1);
    }

    @Test
    void aMethodInATransactionOfItsOwnKeepsItsResultWhenTheCallersRollsBack() {
        String id = id();

        assertThatThrownBy(() -> ledger.captureOnItsOwnThenRollBack(id))
                .hasMessage("rolled back after the inner commit");

        assertThat(billing.captureOnItsOwn(id)).isEqualTo("own 1");   // its own transaction committed: replayed
        assertThat(billing.runs("own-" + id)).isEqualTo(1);
    }

    @Autowired
    MeterRegistry meters;

    @Test
    void theCallsAreCountedByTheMeteredStore() {
        String id = id();
        billing.charge(new Order(id, 1));
        billing.charge(new Order(id, 1));

        assertThat(meters.get("dedup.claims").tag("store", "postgres").tag("result", "claimed").counter().count())
                .isGreaterThanOrEqualTo(1);
        assertThat(meters.get("dedup.claims").tag("store", "postgres").tag("result", "duplicate_completed")
                .counter().count()).isGreaterThanOrEqualTo(1);
    }
}
