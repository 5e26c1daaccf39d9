package com.example.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.DedupKeys;
import dev.dedup.DedupStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example's endpoint over real HTTP: a retry with the same Idempotency-Key is replayed, not charged again; no key
 * is 400, another payment under a used key 422, a key still held elsewhere 409; the actuator endpoint shows a key.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PaymentsOnPostgresTest {
    private static final String PAYMENT = "{\"card\":\"4242\",\"cents\":1500}";

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        String jdbc = System.getenv("DEDUP_TEST_POSTGRES_URL");   // set by scripts/test-servers.sh
        if (jdbc != null && !jdbc.isBlank()) {
            registry.add("dedup.store.uri", () -> jdbc + "&namespace=example-"
                    + UUID.randomUUID().toString().substring(0, 8));
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    PaymentsController payments;

    @Autowired
    DedupStore store;

    private final HttpClient client = HttpClient.newHttpClient();

    @Test
    void aRetryIsReplayedAndChargesOnce() throws Exception {
        String key = UUID.randomUUID().toString();
        long before = payments.charges();

        HttpResponse<String> first = pay(key, PAYMENT);
        HttpResponse<String> retry = pay(key, PAYMENT);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(payments.charges()).isEqualTo(before + 1);
    }

    @Test
    void noKeyIs400AndAnotherPaymentUnderAUsedKeyIs422() throws Exception {
        String key = UUID.randomUUID().toString();

        assertThat(pay(null, PAYMENT).statusCode()).isEqualTo(400);
        assertThat(pay(key, PAYMENT).statusCode()).isEqualTo(201);
        assertThat(pay(key, "{\"card\":\"4242\",\"cents\":9900}").statusCode()).isEqualTo(422);
    }

    @Test
    void aKeyWhoseRequestStillRunsElsewhereIs409WithRetryAfter() throws Exception {
        String key = UUID.randomUUID().toString();
        // Another instance of the service is still running a request with this key: it holds the key's claim.
        Claim elsewhere = (Claim) store.claim(DedupKeys.of("http", "anonymous", "any-tenant", key),
                Duration.ofSeconds(30));
        long before = payments.charges();
        try {
            HttpResponse<String> retry = pay(key, PAYMENT);

            assertThat(retry.statusCode()).isEqualTo(409);
            assertThat(retry.headers().firstValue("Retry-After")).isPresent();
            assertThat(retry.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(payments.charges()).isEqualTo(before);
        } finally {
            store.release(elsewhere);
        }
        assertThat(pay(key, PAYMENT).statusCode()).isEqualTo(201);   // once it gave the key up, the retry runs
    }

    @Test
    void theActuatorEndpointShowsAPaymentsKey() throws Exception {
        String key = UUID.randomUUID().toString();
        pay(key, PAYMENT);

        // docs/spring-boot.md: an anonymous caller's key is http|anonymous|any-tenant|<Idempotency-Key>
        HttpResponse<String> shown = client.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/actuator/dedup/http%7Canonymous%7Cany-tenant%7C" + key))
                .build(), HttpResponse.BodyHandlers.ofString());

        assertThat(shown.statusCode()).isEqualTo(200);
        assertThat(shown.body()).contains("\"state\":\"COMPLETED\"");
    }

    private HttpResponse<String> pay(String key, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
