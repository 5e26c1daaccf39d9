package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Bad {@code dedup.*} values fail the start with the library's own message, naming the bad part, in Boot's short
 * failure report; and a newcomer's configuration starts on a fresh database.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailuresOnPostgresTest {

    private static ThrowableAssert.ThrowingCallable start(String... properties) {
        return () -> {
            try (ConfigurableApplicationContext context = new SpringApplicationBuilder(TestApplication.class)
                    .properties("server.port=0", "spring.datasource.url=" + Servers.postgresJdbcUrl())
                    .properties(properties)
                    .run()) {
                throw new AssertionError("the application started");
            }
        };
    }

    @Test
    void aMisspeltUriParameterFailsTheStartNamingItAndTheNearestName() {
        assertThatThrownBy(start("dedup.store.uri=" + Servers.postgresJdbcUrl() + "&namepsace=orders"))
                .rootCause()
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("namepsace")
                .hasMessageContaining("namespace");
    }

    @Test
    void aMisspeltSchemeFailsTheStartWithAHint() {
        assertThatThrownBy(start("dedup.store.uri=postgress://postgres@127.0.0.1:1/dedup"))
                .rootCause()
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("postgress")
                .hasMessageContaining("postgresql");
    }

    @Test
    void aLeaseOutOfRangeFailsTheStartNamingIt() {
        assertThatThrownBy(start("dedup.store.uri=" + Servers.redisUrl(), "dedup.http.paths=/payments",
                "dedup.lease=0s"))
                .rootCause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease");
    }

    @Test
    void aBadNamespaceFailsTheStartNamingIt() {
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                start("dedup.namespace=two words", "dedup.store.create-schema=true"));
        assertThat(thrown).isNotNull();
        Throwable root = thrown;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        assertThat(root).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("namespace");
    }

    @Test
    void aStoreTimeoutTheStoreRefusesFailsTheStartNamingThePropertyAndTheRange() {
        assertThatThrownBy(start("dedup.store.timeout=500ms", "dedup.store.create-schema=true"))
                .rootCause()
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("dedup.store.timeout=PT0.5S")
                .hasMessageContaining("[PT1S, PT10M]");
    }

    @Test
    void aStoreTimeoutWinsOverTheUrisAndIsCheckedAgainstItsRange() {
        assertThatThrownBy(start("dedup.store.uri=" + Servers.postgresJdbcUrl() + "&timeout=5s",
                "dedup.store.timeout=20m"))
                .satisfies(failure -> assertThat(failure).hasStackTraceContaining(
                        "dedup.store.timeout=PT20M (the store URI's timeout=20m) does not suit the store")
                        .hasStackTraceContaining("[1s, 10m]"));
    }

    @Test
    void theCreateSchemaPropertyCreatesTheTableOfAUriStoreOnAFreshDatabase() {
        String table = "fresh_" + Servers.unique("t").substring(2).replace("-", "");
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(TestApplication.class)
                .properties("server.port=0", "spring.datasource.url=" + Servers.postgresJdbcUrl(),
                        "dedup.store.uri=" + Servers.postgresJdbcUrl() + "&table=" + table,
                        "dedup.store.create-schema=true")
                .run()) {
            DedupStore store = context.getBean(DedupStore.class);
            assertThat(store.claim("first", Duration.ofSeconds(30)).isClaimed()).isTrue();
            PGSimpleDataSource dataSource = new PGSimpleDataSource();
            dataSource.setURL(Servers.postgresJdbcUrl());
            try (PostgresDedupStore cleanup = PostgresDedupStore.builder(dataSource).table(table).build()) {
                cleanup.dropSchema();
            }
        }
    }

    @Test
    void aMissingTableFailsTheStartWithAShortReportThatSaysWhatToDo(CapturedOutput output) {
        String table = "missing_" + Servers.unique("t").substring(2).replace("-", "");

        assertThatThrownBy(start("dedup.store.uri=" + Servers.postgresJdbcUrl() + "&table=" + table));

        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
                .contains("dedup: ").contains(table)
                .contains("Set dedup.store.create-schema=true");
    }

    @Test
    void aProblemTypeBaseThatIsNoAbsoluteUriFailsTheStartNamingIt(CapturedOutput output) {
        assertThatThrownBy(start("dedup.store.uri=" + Servers.redisUrl(), "dedup.http.paths=/payments",
                "dedup.http.problem-type-base=docs/errors"))
                .rootCause()
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("dedup.http.problem-type-base='docs/errors'")
                .hasMessageContaining("absolute URI");
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START");
    }
}
