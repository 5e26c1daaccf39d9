package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The {@code Idempotency-Key} filter's promises that hold on every web stack (servlet and WebFlux), through real HTTP
 * calls, on the store each subclass configures. Each test uses keys and bodies of its own; the application counts
 * its handlers' runs per request body in {@link TestApplication#RUNS}.
 */
abstract class HttpIdempotencyContract {
    @LocalServerPort
    int port;

    Http http;

    @BeforeEach
    void client() {
        http = new Http(port);
    }

    static String key() {
        return UUID.randomUUID().toString();
    }

    static String body() {
        return "p-" + UUID.randomUUID().toString().substring(0, 12);
    }

    @Test
    void aRetryReplaysStatusSelectedHeadersAndBodyWithoutRunningTheHandler() {
        String key = key();
        String body = body();

        HttpResponse<String> first = http.post("/payments", key, body);
        HttpResponse<String> retry = http.post("/payments", "\"" + key + "\"", body);   // as an RFC 8941 sf-string

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body()).contains("\"run\":1");
        assertThat(retry.headers().firstValue("Location")).hasValue("/payments/" + body);
        assertThat(retry.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/json"));
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.headers().firstValue("X-Not-Replayed")).isEmpty();
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void concurrentDuplicatesRunTheHandlerOnceAndTheOthersGet409OrTheReplay() throws Exception {
        String key = key();
        String body = body();
        int clients = 6;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                calls.add(pool.submit(() -> {
                    start.await();
                    return http.post("/payments", key, body, "X-Sleep-Millis", "700");
                }));
            }
            start.countDown();
            int original = 0;
            int conflicts = 0;
            for (Future<HttpResponse<String>> call : calls) {
                HttpResponse<String> response = call.get();
                if (response.statusCode() == 409) {
                    conflicts++;
                    assertThat(response.headers().firstValue("Retry-After")).hasValueSatisfying(
                            seconds -> assertThat(Long.parseLong(seconds)).isBetween(1L, 30L));
                    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
                } else {
                    assertThat(response.statusCode()).isEqualTo(201);
                    if (response.headers().firstValue("Idempotent-Replayed").isEmpty()) {
                        original++;
                    }
                }
            }
            assertThat(original).isEqualTo(1);
            assertThat(conflicts).isPositive();
        } finally {
            pool.shutdownNow();
        }
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void theSameKeyWithAnotherBodyOrPathIs422() {
        String key = key();
        String body = body();
        assertThat(http.post("/payments", key, body).statusCode()).isEqualTo(201);

        HttpResponse<String> otherBody = http.post("/payments", key, body + "-changed");
        HttpResponse<String> otherPath = http.post("/rejects", key, body);

        assertThat(otherBody.statusCode()).isEqualTo(422);
        assertThat(otherBody.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(otherBody.body()).contains("\"status\":422");
        assertThat(otherPath.statusCode()).isEqualTo(422);
        assertThat(TestApplication.runs(body)).isEqualTo(1);
        assertThat(TestApplication.runs(body + "-changed")).isZero();
    }

    @Test
    void anotherBodyWhileTheFirstRequestStillRunsIs422NotA409() throws Exception {
        String key = key();
        String first = body();
        String second = body();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<HttpResponse<String>> running = pool.submit(() -> http.post("/payments", key, first,
                    "X-Sleep-Millis", "1500"));
            while (TestApplication.runs(first) == 0) {
                Thread.sleep(20);   // the first request holds the key from here until it answers
            }
            HttpResponse<String> reused = http.post("/payments", key, second);
            assertThat(reused.statusCode()).isEqualTo(422);
            assertThat(reused.body()).contains("\"status\":422");
            assertThat(running.get().statusCode()).isEqualTo(201);
        } finally {
            pool.shutdownNow();
        }
        assertThat(TestApplication.runs(second)).isZero();
    }

    @Test
    void aMissingKeyOnAProtectedEndpointIs400AndTheHandlerDoesNotRun() {
        String body = body();

        HttpResponse<String> response = http.post("/payments", null, body);

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).contains("Idempotency-Key").contains("\"type\":\""
                + "https://github.com/dedup-dev/dedup/blob/main/docs/spring-boot.md#idempotency-key-missing\"");
        assertThat(TestApplication.runs(body)).isZero();
    }

    @Test
    void anUnprotectedPathRunsWithoutAKey() {
        String body = body();

        assertThat(http.post("/open", null, body).statusCode()).isEqualTo(200);
        assertThat(http.post("/open", null, body).statusCode()).isEqualTo(200);
        assertThat(TestApplication.runs(body)).isEqualTo(2);
    }

    @Test
    void aServerErrorReleasesTheKeySoTheRetryRunsAgainAndIsThenStored() {
        String key = key();
        String body = body();

        HttpResponse<String> first = http.post("/flaky", key, body);
        HttpResponse<String> retry = http.post("/flaky", key, body);
        HttpResponse<String> third = http.post("/flaky", key, body);

        assertThat(first.statusCode()).isEqualTo(503);
        assertThat(first.body()).isEqualTo("down");
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(third.statusCode()).isEqualTo(201);
        assertThat(third.body()).isEqualTo("ok 2");
        assertThat(third.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(TestApplication.runs(body)).isEqualTo(2);
    }

    @Test
    void anExceptionReleasesTheKeySoTheRetryRunsAgain() {
        String key = key();
        String body = body();

        HttpResponse<String> first = http.post("/throws", key, body);
        HttpResponse<String> retry = http.post("/throws", key, body);

        assertThat(first.statusCode()).isEqualTo(500);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo("ok 2");
        assertThat(TestApplication.runs(body)).isEqualTo(2);
    }

    @Test
    void aClientErrorIsStoredAndReplayed() {
        String key = key();
        String body = body();

        HttpResponse<String> first = http.post("/rejects", key, body);
        HttpResponse<String> retry = http.post("/rejects", key, body);

        assertThat(first.statusCode()).isEqualTo(400);
        assertThat(retry.statusCode()).isEqualTo(400);
        assertThat(retry.body()).isEqualTo("bad 1");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void keysAreScopedByThePrincipal() {
        String key = key();
        String body = body();

        HttpResponse<String> alice = http.post("/payments", key, body, "X-Test-User", "alice");
        HttpResponse<String> bob = http.post("/payments", key, body, "X-Test-User", "bob");
        HttpResponse<String> aliceAgain = http.post("/payments", key, body, "X-Test-User", "alice");

        assertThat(alice.statusCode()).isEqualTo(201);
        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(aliceAgain.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(aliceAgain.body()).isEqualTo(alice.body());
        assertThat(TestApplication.runs(body)).isEqualTo(2);
    }

    @Test
    void theSameKeyWithAnotherQueryIs422() {
        String key = key();
        String body = body();
        assertThat(http.post("/payments?to=alice&amount=10", key, body).statusCode()).isEqualTo(201);

        HttpResponse<String> otherQuery = http.post("/payments?to=bob&amount=1000", key, body);
        HttpResponse<String> sameQuery = http.post("/payments?to=alice&amount=10", key, body);

        assertThat(otherQuery.statusCode()).isEqualTo(422);
        assertThat(otherQuery.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(sameQuery.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void aTooManyRequestsAnswerReleasesTheKeySoTheRetryRuns() {
        String key = key();
        String body = body();

        HttpResponse<String> first = http.post("/throttled", key, body);
        HttpResponse<String> retry = http.post("/throttled", key, body);

        assertThat(first.statusCode()).isEqualTo(429);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(TestApplication.runs(body)).isEqualTo(2);
    }

    @Test
    void anErrorPageIsNotStoredEmptyTheRetryGetsItWhole() {
        String key = key();
        String body = body();

        HttpResponse<String> first = http.post("/missing", key, body);
        HttpResponse<String> retry = http.post("/missing", key, body);

        assertThat(first.statusCode()).isEqualTo(404);
        assertThat(first.body()).contains("\"status\":404");
        assertThat(retry.statusCode()).isEqualTo(404);
        assertThat(retry.body()).contains("\"status\":404", "\"path\":\"/missing\"");
        assertThat(retry.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/json"));
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(TestApplication.runs(body)).isEqualTo(2);
    }

    @Test
    void malformedKeysAre400AndTheHandlerDoesNotRun() {
        String body = body();
        for (String malformed : List.of("\"abc", "abc def", "\"a\", \"b\"", "\"a\";p=1", "a,b", "\"\"")) {
            HttpResponse<String> response = http.post("/payments", malformed, body);
            assertThat(response.statusCode()).as(malformed).isEqualTo(400);
            assertThat(response.body()).as(malformed).contains("Idempotency-Key");
        }
        HttpResponse<String> twice = http.post("/payments", key(), body, "Idempotency-Key", key());
        assertThat(twice.statusCode()).isEqualTo(400);
        assertThat(twice.body()).contains("more than once");
        assertThat(TestApplication.runs(body)).isZero();
    }

    @Test
    void anAnonymousCallerIsRefusedByDefault() {
        String body = body();

        HttpResponse<String> response = http.postAnonymously("/payments", key(), body);

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(TestApplication.runs(body)).isZero();
    }

    @Test
    void theStoreIsUpInTheHealthReport() {
        HttpResponse<String> health = http.get("/actuator/health/dedup");

        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"");
    }
}
