package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupStoreException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The store built on the application's own {@code DataSource} (Spring Boot's HikariCP, which waits 30 s for a
 * connection), with {@code dedup.store.timeout=1s}: with the database cut off, protected requests answer 503, the
 * health check reports DOWN and an {@link Idempotent} method fails, each within the store's timeout rather than
 * the pool's; all serve again once the database is back.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dedup.http.paths=/payments", "dedup.store.timeout=1s", "dedup.store.create-schema=true",
                "management.endpoint.health.show-details=always"})
@Timeout(120)
class StoreTimeoutOnPostgresTest extends StoreOutageContract {
    /** Far under the pool's 30 s, with room for a loaded 2-core machine. */
    private static final Duration BOUND = Duration.ofSeconds(8);

    @DynamicPropertySource
    static void applicationDataSourceThroughTheProxy(DynamicPropertyRegistry registry) {
        URI jdbc = URI.create(Servers.postgresJdbcUrl().substring("jdbc:".length()));
        registry.add("spring.datasource.url", () -> "jdbc:postgresql://" + PROXY.host() + ":" + PROXY.port()
                + jdbc.getRawPath() + "?" + jdbc.getRawQuery());
        registry.add("dedup.namespace", () -> Servers.unique("boot-timeout"));
    }

    @Autowired
    Billing billing;

    @Test
    void protectedRequestsAnswer503WithinTheStoreTimeoutNotThePoolsThenServeAgain() {
        String body = Servers.unique("timeout");
        assertThat(onceServing(() -> http.post("/payments", Servers.unique("k"), body + "-before")).statusCode())
                .isEqualTo(201);

        storeDown();
        // The first may meet a cut connection and fail at once; the next ones wait for the pool to connect.
        for (int request = 0; request < 3; request++) {
            HttpResponse<String> down = withinTheBound(() -> http.post("/payments", Servers.unique("k"), body));
            assertThat(down.statusCode()).isEqualTo(503);
        }
        assertThat(TestApplication.runs(body)).isZero();

        PROXY.heal();
        String key = Servers.unique("k");
        assertThat(onceServing(() -> http.post("/payments", key, body)).statusCode()).isEqualTo(201);
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void theHealthCheckReportsDownWithinTheStoreTimeoutThenUp() {
        assertThat(onceServing(() -> http.get("/actuator/health/dedup")).body()).contains("\"status\":\"UP\"");

        storeDown();
        for (int check = 0; check < 2; check++) {
            HttpResponse<String> health = withinTheBound(() -> http.get("/actuator/health/dedup"));
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(health.body()).contains("\"status\":\"DOWN\"").doesNotContain("password");
        }

        PROXY.heal();
        assertThat(onceServing(() -> http.get("/actuator/health/dedup")).body()).contains("\"status\":\"UP\"");
    }

    @Test
    void anIdempotentMethodFailsWithinTheStoreTimeoutThenRunsOnce() {
        String id = Servers.unique("timeout-order");

        storeDown();
        for (int call = 0; call < 2; call++) {
            withinTheBound(() -> {
                assertThatThrownBy(() -> billing.charge(new Billing.Order(id, 100)))
                        .isInstanceOf(DedupStoreException.class);
                return null;
            });
        }
        assertThat(billing.runs(id)).isZero();

        PROXY.heal();
        assertThat(onceServing(() -> http.get("/actuator/health/dedup")).statusCode()).isEqualTo(200);
        assertThat(billing.charge(new Billing.Order(id, 100)).run()).isEqualTo(1);
        assertThat(billing.runs(id)).isEqualTo(1);
    }

    /**
     * The answer once the store serves, within 20 s: a connection the pool kept from before the cut fails the first
     * call on it, and HikariCP backs off up to 5 s between failed connects, so the first calls after the database's
     * return may still answer 503 (retryable, nothing ran).
     */
    private static HttpResponse<String> onceServing(Supplier<HttpResponse<String>> call) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        HttpResponse<String> response = call.get();
        while (response.statusCode() == 503 && System.nanoTime() < deadline) {
            response = call.get();
        }
        return response;
    }

    private static <T> T withinTheBound(Supplier<T> call) {
        long started = System.nanoTime();
        T result = call.get();
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        System.out.println("answered with the database cut off after " + took.toMillis() + " ms");
        assertThat(took).as("time to answer with a 1 s store timeout and a 30 s pool wait").isLessThan(BOUND);
        return result;
    }
}
