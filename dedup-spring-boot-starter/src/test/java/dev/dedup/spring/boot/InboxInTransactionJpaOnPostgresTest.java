package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.spring.boot.Bookings.Booking;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The inbox in a JPA application's transaction: Hibernate, {@code JpaTransactionManager}, the business row an entity;
 * the starter's PostgreSQL store on the {@code DataSource} the {@code EntityManagerFactory} was built on.
 */
@SpringBootTest(classes = {TestApplication.class, InboxInTransactionJpaOnPostgresTest.Service.class}, properties = {
        "dedup.store.create-schema=true", "spring.autoconfigure.exclude=", "spring.jpa.hibernate.ddl-auto=update"})
class InboxInTransactionJpaOnPostgresTest extends InboxInTransactionContract {

    @Configuration
    static class Service {
        @Bean
        Bookings bookings(JdbcTemplate jdbc) {
            return new JpaBookings(jdbc);
        }
    }

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-inbox-jpa"));
    }

    @Autowired
    PlatformTransactionManager transactionManager;

    @Test
    void theTransactionIsJpaTransactionManagers() {
        assertThat(transactionManager).isInstanceOf(JpaTransactionManager.class);
    }

    @Test
    void aWriteThatFailsAtTheCommitsFlushFreesTheKeyToo() {
        String id = id();
        JpaBookings jpa = (JpaBookings) bookings;
        jpa.takeRowOf(id);

        // The method returned and the completion was written; the entity's insert fails when the commit flushes it.
        assertThatThrownBy(() -> bookings.book(id, false)).isInstanceOf(DataIntegrityViolationException.class);

        assertThat(record(id)).isNull();
        jpa.freeRowOf(id);
        assertThat(bookings.book(id, false)).isEqualTo(new Booking(id, 2));
        assertThat(bookings.rows(id)).isEqualTo(1);
    }
}
