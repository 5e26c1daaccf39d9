package dev.dedup.tck;

import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;

/**
 * Finds the real server a store's tests run against, in this order: a URL in an environment variable (what
 * {@code scripts/test-servers.sh} prints, and what CI uses), else a Testcontainers container where a Docker engine
 * runs, else a clear failure under {@code CI=true} or {@code DEDUP_REQUIRE_SERVERS=true} (set by
 * {@code scripts/test.sh}), or a skip with the same message in a developer's IDE.
 */
public final class TestServers {
    private TestServers() {}

    /**
     * The URL of {@code server} ("PostgreSQL 15 with pg_cron", ...) from {@code environmentVariable}, or from
     * {@code container} (may be null when no image can serve) when Docker is available.
     *
     * @param server what the tests need, for the message, such as {@code "PostgreSQL 15 with pg_cron"}
     * @param environmentVariable the variable that holds the server's URL, such as {@code DEDUP_TEST_POSTGRES_URL}
     * @param container starts a container and returns its URL, or null when no image can serve
     * @return the server's URL; when there is none, the test is skipped, or fails under CI
     * @throws IllegalStateException if no server is available and {@code CI} or {@code DEDUP_REQUIRE_SERVERS} is
     *     true
     */
    public static String require(String server, String environmentVariable, Supplier<String> container) {
        return require(server, environmentVariable, container, System::getenv, TestServers::dockerAvailable);
    }

    static String require(String server, String environmentVariable, Supplier<String> container,
            Function<String, String> environment, BooleanSupplier docker) {
        String url = environment.apply(environmentVariable);
        if (url != null && !url.isBlank()) {
            return url;
        }
        if (container != null && docker.getAsBoolean()) {
            return container.get();
        }
        String message = server + " is not available to the tests: set " + environmentVariable
                + ", for example with eval \"$(scripts/test-servers.sh up)\" from the repository root"
                + (container == null ? "" : ", or run where a Docker engine is available for Testcontainers");
        if (Boolean.parseBoolean(environment.apply("CI"))
                || Boolean.parseBoolean(environment.apply("DEDUP_REQUIRE_SERVERS"))) {
            throw new IllegalStateException(message + " (CI=true or DEDUP_REQUIRE_SERVERS=true: a missing server"
                    + " fails the run)");
        }
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }
}
