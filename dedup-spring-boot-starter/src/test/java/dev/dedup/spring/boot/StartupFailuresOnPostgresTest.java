package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupConfigurationException;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** Bad {@code dedup.*} values fail the start with the library's own message, naming the bad part. */
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
}
