package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The inbox in a {@code JdbcTemplate} application's transaction ({@code DataSourceTransactionManager}), on the
 * starter's PostgreSQL store built on the application's {@code DataSource}, metered.
 */
@SpringBootTest(classes = {TestApplication.class, InboxInTransactionOnPostgresTest.Service.class},
        properties = "dedup.store.create-schema=true")
class InboxInTransactionOnPostgresTest extends InboxInTransactionContract {

    @Configuration
    static class Service {
        @Bean
        Bookings bookings(JdbcTemplate jdbc) {
            return new JdbcBookings(jdbc);
        }
    }

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-inbox-pg"));
    }

    @Autowired
    PlatformTransactionManager transactionManager;
    @Autowired
    MeterRegistry meters;

    @Test
    void theTransactionIsDataSourceTransactionManagersAndTheClaimsAreMetered() {
        double claimed = claimed();

        bookings.book(id(), false);

        assertThat(transactionManager).isInstanceOf(DataSourceTransactionManager.class);
        assertThat(claimed()).isEqualTo(claimed + 1);
    }

    private double claimed() {
        var counter = meters.find("dedup.claims").tag("store", "postgres").tag("result", "claimed").counter();
        return counter == null ? 0 : counter.count();
    }
}
