package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
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

        @Bean
        Stamps stamps() {
            return new Stamps();
        }

        @Bean
        Orders orders(JdbcTemplate jdbc) {
            jdbc.execute("CREATE TABLE IF NOT EXISTS placed_orders (id text NOT NULL, cents bigint NOT NULL)");
            return new Orders(jdbc);
        }
    }

    /** A bean with no advice but the inbox's (no {@code @Transactional}), proxied by the starter alone. */
    public static class Stamps {
        private final AtomicInteger runs = new AtomicInteger();

        @Idempotent(key = "#id", scope = "stamps", inTransaction = true)
        public int stamp(String id) {
            return runs.incrementAndGet();
        }

        public int runs() {
            return runs.get();
        }
    }

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-inbox-pg"));
    }

    @Autowired
    Stamps stamps;
    @Autowired
    Orders orders;
    @Autowired
    JdbcTemplate jdbc;
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

    @Test
    void aBeanWithoutOtherAdviceIsProxiedForTheInboxAlone() {
        String id = id();

        Integer first = transactions.execute(status -> stamps.stamp(id));
        Integer again = transactions.execute(status -> stamps.stamp(id));

        assertThat(first).isEqualTo(1);
        assertThat(again).isEqualTo(1);
        assertThatThrownBy(() -> stamps.stamp(id)).isInstanceOf(IdempotentTransactionRequiredException.class);
        assertThat(stamps.runs()).isEqualTo(1);
    }

    @Test
    void theServiceOfTheDocsPlacesAnOrderOnce() {
        Orders.Order order = new Orders.Order(id(), 1500);

        Orders.Placed placed = orders.place(order);

        assertThat(orders.place(order)).isEqualTo(placed);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM placed_orders WHERE id = ?", Integer.class, order.id()))
                .isEqualTo(1);
    }

    private double claimed() {
        var counter = meters.find("dedup.claims").tag("store", "postgres").tag("result", "claimed").counter();
        return counter == null ? 0 : counter.count();
    }
}
