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
}
