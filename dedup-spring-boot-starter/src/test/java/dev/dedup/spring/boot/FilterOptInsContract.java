package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupKeys;
import dev.dedup.DedupStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The filter's opt-ins, over real HTTP: a duplicate of a running request waits for its response
 * ({@code dedup.http.in-progress-wait}) instead of a 409, and a path keeps its responses for a retention of its own
 * ({@code dedup.http.retention-by-path}), and a request without a key runs unprotected
 * ({@code dedup.http.key-required=false}). Subclasses set {@code dedup.http.in-progress-wait=2s},
 * {@code dedup.retention=1h}, {@code dedup.http.retention-by-path.[/payments]=7d} and
 * {@code dedup.http.key-required=false}.
 */
abstract class FilterOptInsContract {
    @LocalServerPort
    int port;

    @Autowired
    DedupStore store;

    @Autowired
    MeterRegistry meters;

    Http http;

    @BeforeEach
    void client() {
        http = new Http(port);
    }

    @Test
    void aDuplicateOfARunningRequestWaitsAndGetsItsResponseReplayed() throws Exception {
        String key = "k-" + UUID.randomUUID();
        String body = "p-" + UUID.randomUUID();
        CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(
                () -> http.post("/payments", key, body, "X-Sleep-Millis", "800"));
        awaitFirstRun(body, first);

        HttpResponse<String> duplicate = http.post("/payments", key, body);

        assertThat(duplicate.statusCode()).isEqualTo(201);
        assertThat(duplicate.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(duplicate.body()).isEqualTo(first.get().body());
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void aDuplicateThatOutwaitsTheWaitGetsA409() throws Exception {
        String key = "k-" + UUID.randomUUID();
        String body = "p-" + UUID.randomUUID();
        CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(
                () -> http.post("/payments", key, body, "X-Sleep-Millis", "3500"));
        awaitFirstRun(body, first);

        HttpResponse<String> duplicate = http.post("/payments", key, body);

        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(duplicate.headers().firstValue("Retry-After")).isPresent();
        assertThat(first.get().statusCode()).isEqualTo(201);
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void aPathWithARetentionOfItsOwnKeepsItsResponsesThatLong() {
        String key = "k-" + UUID.randomUUID();
        assertThat(http.post("/payments", key, "p-" + key).statusCode()).isEqualTo(201);

        Instant expiresAt = store.inspect(DedupKeys.of("http", "user:" + Http.DEFAULT_USER, "any-tenant", key))
                .orElseThrow().expiresAt();

        assertThat(expiresAt).isAfter(Instant.now().plus(Duration.ofDays(6)));
    }

    @Test
    void aRequestWithoutAKeyRunsUnprotectedAndIsCountedWhileAMalformedKeyIsStill400() {
        String body = "p-" + UUID.randomUUID();
        double before = withoutKey();

        HttpResponse<String> first = http.post("/payments", null, body);
        HttpResponse<String> second = http.post("/payments", null, body);
        HttpResponse<String> malformed = http.post("/payments", "\"unterminated", body);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(TestApplication.runs(body)).isEqualTo(2);
        assertThat(withoutKey() - before).isEqualTo(2);
        assertThat(malformed.statusCode()).isEqualTo(400);
    }

    private double withoutKey() {
        var counter = meters.find(MeteredStoreOutages.WITHOUT_KEY_METER).counter();
        return counter == null ? 0 : counter.count();
    }

    /** Waits until the first request's handler runs; fails with its response if it answered without running. */
    private static void awaitFirstRun(String body, CompletableFuture<HttpResponse<String>> first)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (TestApplication.runs(body) == 0) {
            if (first.isDone() || System.nanoTime() > deadline) {
                throw new AssertionError("the first request did not run its handler: " + (first.isDone()
                        ? first.get().statusCode() + " " + first.get().body() : "no answer in 10 s"));
            }
            Thread.sleep(10);
        }
    }
}
