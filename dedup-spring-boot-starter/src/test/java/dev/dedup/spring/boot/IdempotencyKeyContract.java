package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The servlet {@code Idempotency-Key} filter through real HTTP calls: the promises of every web stack, and those of
 * the servlet API's asynchronous handlers and streamed responses.
 */
abstract class IdempotencyKeyContract extends HttpIdempotencyContract {
    @Test
    void aCallableHandlerRunsOnceAndItsResponseIsReplayed() throws Exception {
        asyncHandlerRunsOnceAndIsReplayed("/async/callable");
    }

    @Test
    void aDeferredResultHandlerRunsOnceAndItsResponseIsReplayed() throws Exception {
        asyncHandlerRunsOnceAndIsReplayed("/async/deferred");
    }

    /** A retry while the asynchronous handler runs is told to wait (409); one after it is the replay. */
    private void asyncHandlerRunsOnceAndIsReplayed(String path) throws Exception {
        String key = key();
        String body = body();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<HttpResponse<String>> first = pool.submit(() -> http.post(path, key, body, "X-Sleep-Millis",
                    "800"));
            while (TestApplication.runs(body) == 0) {
                Thread.sleep(10);
            }
            HttpResponse<String> whileRunning = http.post(path, key, body);
            HttpResponse<String> original = first.get();
            HttpResponse<String> retry = http.post(path, key, body);

            assertThat(whileRunning.statusCode()).isEqualTo(409);
            assertThat(original.statusCode()).isEqualTo(201);
            assertThat(retry.statusCode()).isEqualTo(201);
            assertThat(retry.body()).isEqualTo(original.body()).isNotEmpty();
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        } finally {
            pool.shutdownNow();
        }
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void aStreamedResponseIsStoredWholeAndReplayed() {
        String key = key();
        String body = body();

        HttpResponse<String> first = http.post("/async/stream", key, body);
        HttpResponse<String> retry = http.post("/async/stream", key, body);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.body()).isEqualTo("chunk 0 of run 1;chunk 1 of run 1;chunk 2 of run 1;");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void anAsyncHandlerThatTimedOutKeepsItsKeyWhileItMayStillRun() {
        String key = key();
        String body = body();

        HttpResponse<String> timedOut = http.post("/async/deferred", key, body, "X-Never", "true");
        HttpResponse<String> retry = http.post("/async/deferred", key, body, "X-Never", "true");

        assertThat(timedOut.statusCode()).isEqualTo(503);
        assertThat(retry.statusCode()).isEqualTo(409);
        assertThat(retry.headers().firstValue("Retry-After")).isPresent();
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

    @Test
    void aResponseLargerThanARecordStreamsPastTheBufferAndIsReplayedWithoutItsBody() throws Exception {
        String key = key();
        String body = body();
        java.util.concurrent.CountDownLatch go = TestApplication.LARGE_RESPONSE_GO.computeIfAbsent(body,
                b -> new java.util.concurrent.CountDownLatch(1));

        HttpResponse<java.io.InputStream> first = http.postStreaming("/large", key, body);
        byte[] head = first.body().readNBytes(300 * 1024);   // arrives while the handler still waits
        boolean streamed = !TestApplication.LARGE_RESPONSES_FINISHED.contains(body);
        go.countDown();
        byte[] rest = first.body().readAllBytes();
        HttpResponse<String> retry = http.post("/large", key, body);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(head).hasSize(300 * 1024);
        assertThat(streamed).as("the first 300 KiB reached the client before the handler finished").isTrue();
        assertThat(new String(rest, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("end");
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEmpty();
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(TestApplication.runs(body)).isEqualTo(1);
    }

}
