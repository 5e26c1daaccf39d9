package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.tck.FaultProxy;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Opening a store by URI against a server that cannot serve it: the error names the host, port and root cause,
 * says whether retrying can help, never shows the password, and comes within the configured timeout.
 */
class PostgresConnectionFailureTest {
    private static final String PASSWORD = "s3cret-pw";
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /**
     * Well under twice the timeout (a black hole took twice the timeout before), with 1.5 s of room for a loaded
     * 2-core machine: one run under load took 2.0 s against a 1 s timeout.
     */
    private static final Duration BOUND = TIMEOUT.multipliedBy(2).minusMillis(500);

    private static String uri(String hostPort, String database, String user) {
        return "postgresql://" + user + ":" + PASSWORD + "@" + hostPort + "/" + database + "?timeout=" + TIMEOUT.toSeconds() + "s";
    }

    private static String server() {
        URI jdbc = URI.create(PostgresTestSupport.jdbcUrl().substring("jdbc:".length()));
        return jdbc.getHost() + ":" + jdbc.getPort();
    }

    @Test
    @DisplayName("a closed port: retryable, names host and port and the refusal, within the timeout")
    void closedPort() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        assertOpenFails(uri("127.0.0.1:" + port, "dedup", "postgres"))
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                .hasMessageContaining("127.0.0.1:" + port)
                .hasMessageContaining("08001")
                .hasMessageContaining("refused");
    }

    @Test
    @DisplayName("a connection reset as soon as it is accepted: retryable, names host, port and root cause")
    void refusedByTheProxy() {
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", Integer.parseInt(server().split(":")[1]))) {
            proxy.refuseConnections(true);
            assertOpenFails(uri(proxy.host() + ":" + proxy.port(), "dedup", "postgres"))
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                    .hasMessageContaining(proxy.host() + ":" + proxy.port())
                    .hasMessageContaining("[08");
        }
    }

    @Test
    @DisplayName("an unknown user: not retryable, and the server's reason at the top level")
    void unknownUser() {
        assertOpenFails(uri(server(), "dedup", "nobody_dedup"))
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isFalse())
                .hasMessageContaining(server())
                .hasMessageContaining("28000")
                .hasMessageContaining("nobody_dedup");
    }

    @Test
    @DisplayName("an unknown database: not retryable, and the server's reason at the top level")
    void unknownDatabase() {
        assertOpenFails(uri(server(), "no_such_dedup_db", "postgres"))
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isFalse())
                .hasMessageContaining(server())
                .hasMessageContaining("3D000")
                .hasMessageContaining("no_such_dedup_db");
    }

    @Test
    @DisplayName("a server that accepts and never answers: retryable, within the timeout, not twice it")
    void blackHole() {
        try (FaultProxy proxy = FaultProxy.start("127.0.0.1", Integer.parseInt(server().split(":")[1]))) {
            proxy.blackHole(true);
            assertOpenFails(uri(proxy.host() + ":" + proxy.port(), "dedup", "postgres"))
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                    .hasMessageContaining(proxy.host() + ":" + proxy.port());
        }
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertOpenFails(String uri) {
        long started = System.nanoTime();
        Throwable failure = null;
        try {
            DedupStores.open(uri).close();
        } catch (Throwable e) {
            failure = e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        System.out.printf("open %s failed after %d ms: %s%n", uri.replace(PASSWORD, "***"), took.toMillis(),
                failure == null ? "(did not fail)" : failure.getMessage());
        assertThat(took).as("time to fail").isLessThan(BOUND);
        return assertThat(failure)
                .isInstanceOf(DedupStoreException.class)
                .satisfies(e -> assertThat(e.toString()).doesNotContain(PASSWORD))
                .satisfies(e -> assertThat(e.getCause()).isNotNull());
    }
}
