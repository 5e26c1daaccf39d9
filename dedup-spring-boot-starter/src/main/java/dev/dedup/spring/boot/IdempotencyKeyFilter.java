package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * Makes protected endpoints idempotent with the {@code Idempotency-Key} header (IETF
 * draft-ietf-httpapi-idempotency-key-header): the first request with a key runs and its response is stored; a
 * retry gets the stored response again, marked with a replay header, and the handler does not run.
 *
 * <ul>
 *   <li>No key on a protected request: 400. A body over {@code dedup.http.max-body-size}: 413.</li>
 *   <li>The key of a completed request, sent with another method, path or body: 422.</li>
 *   <li>The key of a request still running: 409 with {@code Retry-After}.</li>
 *   <li>2xx, 3xx and 4xx responses are stored; a 5xx (unless {@code dedup.http.store-server-errors}) or an
 *       exception releases the key, so the retry runs again.</li>
 *   <li>The store unreachable: 503, or the request runs unprotected with {@code dedup.http.fail-open=true}.</li>
 * </ul>
 *
 * <p>Keys are scoped by the authenticated principal and, when configured, a tenant header. Handlers on protected
 * paths answer synchronously (no {@code DeferredResult} or streaming): the response is buffered to be stored.
 */
public class IdempotencyKeyFilter extends OncePerRequestFilter {
    private static final Logger log = LoggerFactory.getLogger(IdempotencyKeyFilter.class);

    private final DedupProperties.Http settings;
    private final ProtectedRequests protectedRequests;
    private final IdempotencyKeys keys;
    private final IdempotentConsumer<Exchange, StoredResponse> consumer;
    private final StoreOutageListener outages;
    private final Clock clock = Clock.systemUTC();

    /**
     * Creates the filter.
     *
     * @param store the store that holds the keys and the stored responses
     * @param properties the settings: {@code dedup.lease}, {@code dedup.retention} and {@code dedup.http.*}
     * @param outages told of each request that met an unreachable store
     * @throws IllegalArgumentException if the lease or the retention is out of range
     */
    public IdempotencyKeyFilter(DedupStore store, DedupProperties properties, StoreOutageListener outages) {
        this.settings = properties.getHttp();
        this.protectedRequests = new ProtectedRequests(settings.getMethods(), settings.getPaths());
        this.keys = new IdempotencyKeys(settings.getKeyHeader(), settings.getTenantHeader());
        this.outages = Objects.requireNonNull(outages, "outages");
        // The store keeps the request's fingerprint with the claim: a different request under a key still in
        // progress is refused (KeyReused) as well as one under a completed key.
        this.consumer = IdempotentConsumer.builder(store, Exchange::key, new StoredResponseCodec())
                .fingerprint(exchange -> exchange.fingerprint)
                .lease(properties.getLease())
                .retention(properties.getRetention())
                .build();
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !protectedRequests.matches(request);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String clientKey;
        try {
            clientKey = keys.clientKey(request);
        } catch (IllegalArgumentException e) {
            Problems.write(response, 400, "Invalid " + keys.keyHeader(), e.getMessage());
            return;
        }
        if (clientKey == null) {
            Problems.write(response, 400, keys.keyHeader() + " required",
                    "this endpoint requires an " + keys.keyHeader() + " header, a unique value per operation");
            return;
        }
        BufferedBodyRequest buffered = BufferedBodyRequest.read(request, settings.getMaxBodySize().toBytes());
        if (buffered == null) {
            Problems.write(response, 413, "Request body too large", "a request with an " + keys.keyHeader()
                    + " may carry at most " + settings.getMaxBodySize().toBytes() + " bytes");
            return;
        }
        byte[] fingerprint = RequestFingerprint.of(request.getMethod(), ProtectedRequests.pathOf(request),
                buffered.body());
        Exchange exchange = new Exchange(keys.scopedKey(request, clientKey), buffered, response, chain,
                fingerprint);
        answer(consumer.process(exchange, this::run), exchange);
    }

    /** The handler, under a won claim: runs the rest of the chain into a buffer and returns what to store. */
    private StoredResponse run(Exchange exchange) throws HandlerFailure, ReleasedResponse {
        ContentCachingResponseWrapper buffer = new ContentCachingResponseWrapper(exchange.response);
        exchange.buffer = buffer;
        try {
            exchange.chain.doFilter(exchange.request, buffer);
        } catch (IOException | ServletException | RuntimeException e) {
            throw new HandlerFailure(e);
        }
        if (exchange.request.isAsyncStarted()) {
            throw new HandlerFailure(new ServletException("an asynchronous handler cannot answer a request with an "
                    + keys.keyHeader() + ": its response must be complete when the handler returns"));
        }
        StoredResponse stored = new StoredResponse(exchange.fingerprint, buffer.getStatus(), replayHeaders(buffer),
                buffer.getContentAsByteArray(), false);
        if (stored.status() >= 500 && !settings.isStoreServerErrors()) {
            throw new ReleasedResponse();
        }
        return stored;
    }

    private Map<String, List<String>> replayHeaders(ContentCachingResponseWrapper buffer) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : settings.getReplayHeaders()) {
            List<String> values = "Content-Type".equalsIgnoreCase(name)
                    ? (buffer.getContentType() == null ? List.of() : List.of(buffer.getContentType()))
                    : List.copyOf(buffer.getHeaders(name));
            if (!values.isEmpty()) {
                headers.put(name, values);
            }
        }
        return headers;
    }

    private void answer(ProcessingOutcome<StoredResponse> outcome, Exchange exchange)
            throws IOException, ServletException {
        HttpServletResponse response = exchange.response;
        if (outcome instanceof ProcessingOutcome.Processed<StoredResponse>) {
            exchange.buffer.copyBodyToResponse();
        } else if (outcome instanceof ProcessingOutcome.LeaseLost<StoredResponse>) {
            log.warn("{} {}: the response was sent but its completion was not recorded (the lease lapsed or the store"
                    + " failed); a retry may run the handler again", exchange.request.getMethod(),
                    ProtectedRequests.pathOf(exchange.request));
            exchange.buffer.copyBodyToResponse();
        } else if (outcome instanceof ProcessingOutcome.AlreadyProcessed<StoredResponse> done) {
            replay(done.result().orElse(null), exchange);
        } else if (outcome instanceof ProcessingOutcome.KeyReused<StoredResponse>) {
            reused(response);
        } else if (outcome instanceof ProcessingOutcome.InProgressElsewhere<StoredResponse> running) {
            response.setHeader("Retry-After", String.valueOf(secondsUntil(running.leaseExpiresAt())));
            Problems.write(response, 409, "Request in progress", "a request with this " + keys.keyHeader()
                    + " is still being processed; retry after it has finished");
        } else if (outcome instanceof ProcessingOutcome.Failed<StoredResponse> failed) {
            failed(failed, exchange);
        } else {
            Problems.write(response, 409, "Key already used", "this " + keys.keyHeader()
                    + " was used by a request whose response cannot be replayed");
        }
    }

    private void failed(ProcessingOutcome.Failed<StoredResponse> failed, Exchange exchange)
            throws IOException, ServletException {
        Throwable cause = failed.cause();
        if (failed.key() == null) {
            Problems.write(exchange.response, 400, "Invalid " + keys.keyHeader(), String.valueOf(cause.getMessage()));
        } else if (cause instanceof ReleasedResponse) {
            exchange.buffer.copyBodyToResponse();
        } else if (cause instanceof HandlerFailure handlerFailure) {
            Throwable thrown = handlerFailure.getCause();
            if (thrown instanceof IOException io) {
                throw io;
            }
            if (thrown instanceof ServletException servlet) {
                throw servlet;
            }
            throw (RuntimeException) thrown;
        } else {
            storeUnavailable(cause, exchange);
        }
    }

    private void storeUnavailable(Throwable failure, Exchange exchange) throws IOException, ServletException {
        boolean passThrough = settings.isFailOpen();
        log.warn("{} {}: the dedup store is unavailable ({}); {}", exchange.request.getMethod(),
                ProtectedRequests.pathOf(exchange.request), failure.toString(), passThrough
                        ? "running the request without deduplication (dedup.http.fail-open=true)"
                        : "answering 503");
        try {
            outages.storeUnavailable(passThrough, failure);
        } catch (RuntimeException e) {
            log.warn("the store outage listener failed", e);
        }
        if (passThrough) {
            exchange.chain.doFilter(exchange.request, exchange.response);
        } else {
            Problems.write(exchange.response, 503, "Service unavailable",
                    "requests with an " + keys.keyHeader() + " cannot be processed now; retry later");
        }
    }

    private void replay(StoredResponse stored, Exchange exchange) throws IOException {
        HttpServletResponse response = exchange.response;
        if (stored == null) {
            Problems.write(response, 409, "Key already used", "this " + keys.keyHeader()
                    + " was used by a request whose response cannot be replayed");
            return;
        }
        if (!stored.matches(exchange.fingerprint)) {
            reused(response);   // a record stored before the claim kept fingerprints
            return;
        }
        response.setStatus(stored.status());
        stored.headers().forEach((name, values) -> values.forEach(value -> response.addHeader(name, value)));
        response.setHeader(settings.getReplayedHeader(), "true");
        response.setContentLength(stored.body().length);
        response.getOutputStream().write(stored.body());
    }

    private void reused(HttpServletResponse response) throws IOException {
        Problems.write(response, 422, keys.keyHeader() + " reused", "this " + keys.keyHeader()
                + " was already used for a different request (method, path or body)");
    }

    private long secondsUntil(Instant expiresAt) {
        long millis = Duration.between(clock.instant(), expiresAt).toMillis();
        return Math.max(1, (millis + 999) / 1000);
    }

    /** One protected request on its way through the filter. */
    private static final class Exchange {
        private final String key;
        private final BufferedBodyRequest request;
        private final HttpServletResponse response;
        private final FilterChain chain;
        private final byte[] fingerprint;
        private ContentCachingResponseWrapper buffer;

        private Exchange(String key, BufferedBodyRequest request, HttpServletResponse response, FilterChain chain,
                byte[] fingerprint) {
            this.key = key;
            this.request = request;
            this.response = response;
            this.chain = chain;
            this.fingerprint = fingerprint;
        }

        private String key() {
            return key;
        }
    }

    /** What the rest of the chain threw: the key is released, and the exception goes on to the container. */
    private static final class HandlerFailure extends Exception {
        private static final long serialVersionUID = 1L;

        private HandlerFailure(Exception cause) {
            super(cause);
        }
    }

    /** A response that must not be stored (a 5xx): the key is released, and the response is sent as it is. */
    private static final class ReleasedResponse extends Exception {
        private static final long serialVersionUID = 1L;

        private ReleasedResponse() {
            super("released", null, false, false);
        }
    }
}
