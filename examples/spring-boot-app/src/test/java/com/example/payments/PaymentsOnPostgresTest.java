package com.example.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The example's endpoint over real HTTP: a retry with the same Idempotency-Key is replayed, not charged again. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PaymentsOnPostgresTest {
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

    @Test
    void aRetryIsReplayedAndChargesOnce() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/payments"))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofString("{\"card\":\"4242\",\"cents\":1500}"))
                .build();
        long before = payments.charges();

        HttpResponse<String> first = client.send(request, HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> retry = client.send(request, HttpResponse.BodyHandlers.ofString());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(payments.charges()).isEqualTo(before + 1);
    }
}
