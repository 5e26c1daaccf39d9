package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import dev.dedup.store.mysql.MysqlDedupStore;
import javax.sql.DataSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The inbox in a {@code JdbcTemplate} application's transaction on MariaDB, with the application's own MySQL/MariaDB
 * store bean on its {@code DataSource}.
 */
@SpringBootTest(classes = {TestApplication.class, InboxInTransactionOnMariaDbTest.Service.class})
class InboxInTransactionOnMariaDbTest extends InboxInTransactionContract {

    @Configuration
    static class Service {
        @Bean
        Bookings bookings(JdbcTemplate jdbc) {
            return new JdbcBookings(jdbc);
        }

        @Bean
        DedupStore dedupStore(DataSource dataSource) {
            return MysqlDedupStore.builder(dataSource).namespace(Servers.unique("boot-inbox-maria"))
                    .createSchema(true).build();
        }
    }

    @DynamicPropertySource
    static void mariaDb(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::mariaDbJdbcUrl);
    }
}
