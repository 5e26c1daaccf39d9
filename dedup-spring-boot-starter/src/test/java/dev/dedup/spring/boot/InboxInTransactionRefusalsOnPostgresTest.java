package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupConfigurationException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

/**
 * {@code @Idempotent(inTransaction = true)} refuses, at the method's first call and before it runs, a store that
 * cannot hold its claim in the application's transaction.
 */
class InboxInTransactionRefusalsOnPostgresTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class, JacksonAutoConfiguration.class,
                    DedupStoreAutoConfiguration.class, DedupAnnotationAutoConfiguration.class))
            .withUserConfiguration(InboxInTransactionOnPostgresTest.Service.class)
            .withPropertyValues("spring.datasource.url=" + Servers.postgresJdbcUrl());

    @Test
    void aStoreOnAPoolOfItsOwnIsRefused() {
        runner.withPropertyValues("dedup.store.uri=" + Servers.postgresJdbcUrl(), "dedup.store.create-schema=true",
                "dedup.namespace=" + Servers.unique("boot-inbox-uri")).run(context -> {
                    Bookings bookings = context.getBean(Bookings.class);
                    String id = Servers.unique("booking");

                    assertThatThrownBy(() -> bookings.book(id, false))
                            .isInstanceOf(DedupConfigurationException.class)
                            .hasMessageContaining("Bookings.book is @Idempotent(inTransaction = true), but the"
                                    + " transaction holds no connection of the store's DataSource")
                            .hasMessageContaining("not from dedup.store.uri");
                    assertThat(bookings.runs(id)).isZero();
                    assertThat(bookings.rows(id)).isZero();
                });
    }

    @Test
    void aStoreThatIsNotSqlIsRefused() {
        runner.withPropertyValues("dedup.store.uri=memory:").run(context -> {
            Bookings bookings = context.getBean(Bookings.class);
            String id = Servers.unique("booking");

            assertThatThrownBy(() -> bookings.book(id, false))
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("Bookings.book is @Idempotent(inTransaction = true), but the store is a"
                            + " dev.dedup.memory.InMemoryDedupStore, which cannot join a JDBC transaction");
            assertThat(bookings.runs(id)).isZero();
        });
    }
}
