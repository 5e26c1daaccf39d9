package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.spring.boot.Billing.Order;
import dev.dedup.spring.boot.Billing.Receipt;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The {@code dedup} actuator endpoint over real HTTP, on the PostgreSQL store, reading and forgetting live keys. */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"dedup.store.create-schema=true", "management.endpoints.web.exposure.include=health,metrics,dedup",
                "dedup.http.paths=/payments"})
class DedupEndpointOnPostgresTest {
    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-endpoint"));
    }

    @LocalServerPort
    int port;

    @Autowired
    Billing billing;

    Http http;

    @BeforeEach
    void client() {
        http = new Http(port);
    }

    static String id() {
        return "o-" + UUID.randomUUID().toString().substring(0, 12);
    }

    /** Boot's own JSON parser: the test runs on both Spring Boot lines, whose Jacksons differ. */
    static Map<String, Object> json(HttpResponse<String> response) {
        return JsonParserFactory.getJsonParser().parseMap(response.body());
    }

    @Test
    void aCompletedKeyIsShownWithoutItsResultAndForgettingItRunsTheMethodAgain() {
        String id = id();
        billing.charge(new Order(id, 700));
        String path = "/actuator/dedup/dev.dedup.spring.boot.Billing.charge(Order):" + id;

        HttpResponse<String> shown = http.get(path);

        assertThat(shown.statusCode()).isEqualTo(200);
        Map<String, Object> view = json(shown);
        assertThat(view.get("key")).isEqualTo("dev.dedup.spring.boot.Billing.charge(Order):" + id);
        assertThat((String) view.get("namespace")).startsWith("boot-endpoint-");
        assertThat(view.get("state")).isEqualTo("COMPLETED");
        assertThat(Instant.parse((String) view.get("expiresAt"))).isAfter(Instant.now().plusSeconds(3600));
        assertThat((String) view.get("fingerprint")).hasSize(64);   // SHA-256 of the cents, in hex
        assertThat(((Number) view.get("resultBytes")).intValue()).isPositive();
        assertThat(shown.body()).doesNotContain("\"run\"");           // the stored receipt itself is not shown

        HttpResponse<String> forgotten = http.delete(path);

        assertThat(forgotten.statusCode()).isEqualTo(200);
        assertThat(json(forgotten).get("forgotten")).isEqualTo(true);
        assertThat(http.get(path).statusCode()).isEqualTo(404);
        assertThat(billing.charge(new Order(id, 700)).run()).isEqualTo(2);
    }

    @Test
    void theKeyOfAnHttpRequestIsBuiltAsTheDocsSayAndTheDefaultEndpointsStayExposed() {
        String clientKey = id();
        assertThat(http.post("/payments", clientKey, "p-" + clientKey, "X-Test-User", "alice").statusCode())
                .isEqualTo(201);

        // docs/spring-boot.md: http|user:<principal>|any-tenant|<Idempotency-Key>, '|' written %7C in a URL
        HttpResponse<String> shown = http.get("/actuator/dedup/http%7Cuser:alice%7Cany-tenant%7C" + clientKey);

        assertThat(shown.statusCode()).isEqualTo(200);
        assertThat(json(shown).get("state")).isEqualTo("COMPLETED");
        assertThat(http.get("/actuator/health").statusCode()).isEqualTo(200);
        assertThat(http.get("/actuator/metrics/dedup.claims").statusCode()).isEqualTo(200);
    }

    @Test
    void aRunningKeyShowsADigestOfItsOwnerAndForgettingItLetsTheNextCallRun() throws Exception {
        String id = id();
        CompletableFuture<Receipt> first = Billing.startSlowCharge(billing, id, 1500);
        String path = "/actuator/dedup/dev.dedup.spring.boot.Billing.slowCharge(String,long):" + id;

        Map<String, Object> view = json(http.get(path));
        assertThat(view.get("state")).isEqualTo("IN_PROGRESS");
        assertThat((String) view.get("ownerDigest")).matches("[0-9a-f]{16}");
        assertThat(view).containsEntry("resultBytes", null);

        assertThat(json(http.delete(path)).get("forgotten")).isEqualTo(true);
        Receipt second = billing.slowCharge(id, 0);   // runs at once: the key is free

        assertThat(second.run()).isEqualTo(2);
        assertThat(first.get(10, TimeUnit.SECONDS).run()).isEqualTo(1);  // its completion was refused, not replayed
    }

    @Test
    void anUnknownKeyIs404AndForgettingItAnswersFalse() {
        String path = "/actuator/dedup/dev.dedup.spring.boot.Billing.charge(Order):" + id();

        assertThat(http.get(path).statusCode()).isEqualTo(404);
        HttpResponse<String> forgotten = http.delete(path);
        assertThat(forgotten.statusCode()).isEqualTo(200);
        assertThat(json(forgotten).get("forgotten")).isEqualTo(false);
    }
}
