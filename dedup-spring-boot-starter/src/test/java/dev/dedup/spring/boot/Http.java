package dev.dedup.spring.boot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Real HTTP calls to the application under test. A POST comes from the principal {@value #DEFAULT_USER} (the test
 * application reads it from {@code X-Test-User}) unless it names another, or is sent with {@link #postAnonymously}.
 */
final class Http {
    static final String DEFAULT_USER = "tester";

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int port;

    Http(int port) {
        this.port = port;
    }

    HttpResponse<String> post(String path, String key, String body, String... headers) {
        boolean namesAUser = false;
        for (int i = 0; i < headers.length; i += 2) {
            namesAUser |= headers[i].equalsIgnoreCase("X-Test-User");
        }
        return namesAUser ? postAnonymously(path, key, body, headers)
                : postAnonymously(path, key, body, concat(headers, "X-Test-User", DEFAULT_USER));
    }

    HttpResponse<String> postAnonymously(String path, String key, String body, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        if (headers.length > 0) {
            request.headers(headers);
        }
        return send(request.build());
    }

    /** A POST whose response body is read as it arrives. */
    HttpResponse<java.io.InputStream> postStreaming(String path, String key, String body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "text/plain")
                .header("Idempotency-Key", key).header("X-Test-User", DEFAULT_USER)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    HttpResponse<String> get(String path) {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).GET().build());
    }

    HttpResponse<String> delete(String path) {
        return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).DELETE().build());
    }

    private static String[] concat(String[] headers, String... more) {
        String[] all = java.util.Arrays.copyOf(headers, headers.length + more.length);
        System.arraycopy(more, 0, all, headers.length, more.length);
        return all;
    }

    private HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
