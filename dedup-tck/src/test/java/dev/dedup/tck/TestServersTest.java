package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

class TestServersTest {
    private static final String VARIABLE = "DEDUP_TEST_REDIS_URL";

    @Test
    void theEnvironmentVariableComesFirst() {
        String url = TestServers.require("Redis", VARIABLE, () -> "from-container",
                Map.of(VARIABLE, "redis://127.0.0.1:16379")::get, () -> true);

        assertThat(url).isEqualTo("redis://127.0.0.1:16379");
    }

    @Test
    void aContainerServesWhenDockerRuns() {
        assertThat(TestServers.require("Redis", VARIABLE, () -> "from-container", Map.<String, String>of()::get,
                () -> true)).isEqualTo("from-container");
    }

    @Test
    void underCiAMissingServerFailsAndSaysHowToStartOne() {
        assertThatThrownBy(() -> TestServers.require("Redis", VARIABLE, () -> "unused", Map.of("CI", "true")::get,
                () -> false))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(VARIABLE)
                .hasMessageContaining("scripts/test-servers.sh up");
        assertThatThrownBy(() -> TestServers.require("Redis", VARIABLE, null,
                Map.of("DEDUP_REQUIRE_SERVERS", "true")::get, () -> true))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void outsideCiAMissingServerSkipsWithTheSameAdvice() {
        assertThatThrownBy(() -> TestServers.require("Redis", VARIABLE, null, Map.<String, String>of()::get,
                () -> false))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("scripts/test-servers.sh up");
    }
}
