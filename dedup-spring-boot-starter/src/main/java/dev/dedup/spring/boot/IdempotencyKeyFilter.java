package dev.dedup.spring.boot;

import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.spring.boot.DedupProperties.Http.AnonymousCallers;
import dev.dedup.spring.boot.Problems.Problem;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.security.Principal;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
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
 *   <li>No key on a protected request, or a malformed one: 400. No authenticated principal (unless
 *       {@code dedup.http.anonymous-callers=shared}): 401. A body over {@code dedup.http.max-body-size}: 413.</li>
 *   <li>The key of a completed request, sent with another method, path, query or body: 422.</li>
 *   <li>The key of a request still running: 409 with {@code Retry-After}; with {@code dedup.http.in-progress-wait}
 *       the duplicate first waits up to that long for the running request's response, and replays it.</li>
 *   <li>2xx, 3xx and 4xx responses are stored; a 5xx (unless {@code dedup.http.store-server-errors}), a status in
 *       {@code dedup.http.release-statuses} (429, 408 ...), an error page ({@code sendError}, whose body the
 *       container renders after the filter) or an exception releases the key, so the retry runs again.</li>
 *   <li>The store unreachable: 503, or the request runs unprotected with {@code dedup.http.fail-open=true}.</li>
 * </ul>
 *
 * <p>Asynchronous handlers ({@code Callable}, {@code DeferredResult}, {@code CompletableFuture},
 * {@code StreamingResponseBody}) keep the key, heartbeated, until their response is complete, and their response is
 * stored then. One that times out or fails at the container may still be running, so its key is not released: it
 * lapses with its lease. Keys are scoped by the authenticated principal and, when configured, a tenant header.
 */
public class IdempotencyKeyFilter extends OncePerRequestFilter {
    /** The request attribute that carries an asynchronous handler's exchange to the dispatch that ends it. */
    private static final String ASYNC_EXCHANGE = IdempotencyKeyFilter.class.getName() + ".exchange";
    private static final Logger log = LoggerFactory.getLogger(IdempotencyKeyFilter.class);

    private final DedupProperties.Http settings;
    private final ProtectedRequests protectedRequests;
    private final IdempotencyKeys keys;
    private final Problems problems;
    private final PathRetentions retentions;
    /** A consumer per retention in use: the default one, and those of dedup.http.retention-by-path. */
    private final Map<Duration, IdempotentConsumer<Exchange, StoredResponse>> consumers = new HashMap<>();
    private final StoreOutageListener outages;
    private final Clock clock = Clock.systemUTC();
    private volatile boolean warnedAboutAnonymousCallers;

    /**
     * Creates the filter.
     *
     * @param store the store that holds the keys and the stored responses
     * @param properties the settings: {@code dedup.lease}, {@code dedup.retention} and {@code dedup.http.*}
     * @param outages told of each request that met an unreachable store
     * @throws IllegalArgumentException if the lease or the retention is out of range
     * @throws dev.dedup.DedupConfigurationException if {@code dedup.http.problem-type-base} is no absolute URI
     */
    public IdempotencyKeyFilter(DedupStore store, DedupProperties properties, StoreOutageListener outages) {
        this.settings = properties.getHttp();
        this.protectedRequests = new ProtectedRequests(settings.getMethods(), settings.getPaths());
        this.keys = new IdempotencyKeys(settings.getKeyHeader(), settings.getTenantHeader());
        this.problems = Problems.documentedAt(settings.getProblemTypeBase());
        this.outages = Objects.requireNonNull(outages, "outages");
        this.retentions = new PathRetentions(properties.getRetention(), settings.getRetentionByPath());
        for (Duration retention : retentions.all()) {
            // The store keeps the request's fingerprint with the claim: a different request under a key still in
            // progress is refused (KeyReused) as well as one under a completed key.
            consumers.put(retention, IdempotentConsumer.builder(store, Exchange::key, new StoredResponseCodec())
                    .fingerprint(exchange -> exchange.fingerprint)
                    .lease(properties.getLease())
                    .retention(retention)
                    .build());
        }
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !protectedRequests.matches(request.getMethod(), pathOf(request));
    }

    /** The filter sees the dispatch that ends an asynchronous handler: that is when its response is complete. */
    @Override
    protected boolean shouldNotFilterAsyncDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (isAsyncDispatch(request)) {
            resume(request, response, chain);
            return;
        }
        String clientKey;
        try {
            clientKey = keys.clientKey(headerValues(request, keys.keyHeader()));
        } catch (IllegalArgumentException e) {
            writeProblem(response, Problem.KEY_INVALID, "Invalid " + keys.keyHeader(), e.getMessage());
            return;
        }
        if (clientKey == null && !settings.isKeyRequired()) {
            outages.ranWithoutKey();
            chain.doFilter(request, response);
            return;
        }
        if (request.getUserPrincipal() == null && settings.getAnonymousCallers() == AnonymousCallers.REFUSE) {
            refuseAnonymous(request, response);
            return;
        }
        if (clientKey == null) {
            writeProblem(response, Problem.KEY_MISSING, keys.keyHeader() + " required",
                    "this endpoint requires an " + keys.keyHeader() + " header, a unique value per operation");
            return;
        }
        BufferedBodyRequest buffered = BufferedBodyRequest.read(request, settings.getMaxBodySize().toBytes());
        if (buffered == null) {
            writeProblem(response, Problem.BODY_TOO_LARGE, "Request body too large", "a request with an " + keys.keyHeader()
                    + " may carry at most " + settings.getMaxBodySize().toBytes() + " bytes");
            return;
        }
        byte[] fingerprint = RequestFingerprint.of(request.getMethod(), pathOf(request),
                request.getQueryString(), buffered.body());
        Principal principal = request.getUserPrincipal();
        String tenant = keys.tenantHeader() == null ? null : request.getHeader(keys.tenantHeader());
        Exchange exchange = new Exchange(keys.scopedKey(principal == null ? null : principal.getName(), tenant,
                clientKey), buffered, response, chain,
                fingerprint);
        IdempotentConsumer<Exchange, StoredResponse> requests = consumers.get(retentions.of(pathOf(request)));
        InProgressWait waitForRunning = new InProgressWait(settings.getInProgressWait());
        while (true) {
            exchange.outcome = requests.processDeferred(exchange, this::run).toCompletableFuture();
            if (!exchange.outcome.isDone()) {
                return;   // an asynchronous handler runs on: resume() answers when its response is complete
            }
            ProcessingOutcome<StoredResponse> outcome = exchange.outcome.join();
            if (!(outcome instanceof ProcessingOutcome.InProgressElsewhere<StoredResponse>)
                    || !waitForRunning.sleep()) {
                answer(outcome, exchange);
                return;
            }
            // dedup.http.in-progress-wait: claim again, to replay the first request's response once it has ended
            // (or to run, if it failed and freed the key).
        }
    }

    /** {@return the request's path inside the application's context path, as sent (not decoded)} */
    static String pathOf(HttpServletRequest request) {
        return request.getRequestURI().substring(request.getContextPath().length());
    }

    private static List<String> headerValues(HttpServletRequest request, String name) {
        Enumeration<String> values = request.getHeaders(name);
        return values == null ? List.of() : Collections.list(values);
    }

    private void writeProblem(HttpServletResponse response, Problem problem, String title, String detail)
            throws IOException {
        byte[] body = problems.body(problem, title, detail);
        response.resetBuffer();
        response.setStatus(problem.status);
        response.setContentType("application/problem+json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    private void refuseAnonymous(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!warnedAboutAnonymousCallers) {
            warnedAboutAnonymousCallers = true;
            log.warn("{} {}: a request without an authenticated principal was refused (401): keys are scoped by the"
                    + " principal, and anonymous callers would share one scope. Authenticate before this filter, or"
                    + " set dedup.http.anonymous-callers=shared to accept that", request.getMethod(),
                    pathOf(request));
        }
        writeProblem(response, Problem.UNAUTHENTICATED, "Authentication required", "requests with an " + keys.keyHeader()
                + " on this endpoint must come from an authenticated caller");
    }

    /**
     * The handler, under a won claim: runs the rest of the chain into a buffer; returns the response to store, or
     * a stage completed by {@link #resume} when the handler went asynchronous.
     */
    private CompletionStage<StoredResponse> run(Exchange exchange) throws HandlerFailure, ReleasedResponse {
        ResponseBuffer buffer = new ResponseBuffer(exchange.response);
        exchange.buffer = buffer;
        try {
            exchange.chain.doFilter(exchange.request, buffer);
        } catch (IOException | ServletException | RuntimeException e) {
            throw new HandlerFailure(e);
        }
        if (exchange.request.isAsyncStarted()) {
            return exchange.awaitAsyncEnd();
        }
        return CompletableFuture.completedFuture(toStore(exchange));
    }

    /** The dispatch that continues an asynchronous handler: when it ends the response, settle the claim with it. */
    private void resume(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Exchange exchange = (Exchange) request.getAttribute(ASYNC_EXCHANGE);
        if (exchange == null) {
            chain.doFilter(request, response);
            return;
        }
        try {
            chain.doFilter(request, response);
        } catch (IOException | ServletException | RuntimeException e) {
            request.removeAttribute(ASYNC_EXCHANGE);
            if (exchange.abandoned) {
                exchange.pending.cancel(false);   // the work may still run: the key lapses, never released under it
                throw e;
            }
            exchange.settle(new HandlerFailure(e));
            answer(exchange.outcome.join(), exchange);
            return;
        }
        if (request.isAsyncStarted()) {
            return;   // another asynchronous round: the next dispatch settles
        }
        request.removeAttribute(ASYNC_EXCHANGE);
        if (exchange.abandoned) {
            exchange.pending.cancel(false);
        } else {
            try {
                exchange.pending.complete(toStore(exchange));
            } catch (ReleasedResponse released) {
                exchange.pending.completeExceptionally(released);
            }
        }
        answer(exchange.outcome.join(), exchange);
    }

    /** The complete response, to store; or {@link ReleasedResponse} when it must not be stored. */
    private StoredResponse toStore(Exchange exchange) throws ReleasedResponse {
        ResponseBuffer buffer = exchange.buffer;
        int status = buffer.getStatus();
        if ((buffer.errorSent && status >= 400) || (status >= 500 && !settings.isStoreServerErrors())
                || settings.getReleaseStatuses().contains(status)) {
            throw new ReleasedResponse();
        }
        byte[] body = buffer.bodyOrNull();
        StoredResponse stored = new StoredResponse(exchange.fingerprint, status, replayHeaders(buffer),
                body == null ? new byte[0] : body, false);
        return body == null ? stored.withoutBody() : stored;
    }

    private Map<String, List<String>> replayHeaders(ResponseBuffer buffer) {
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
            exchange.buffer.sendAsIs();
        } else if (outcome instanceof ProcessingOutcome.LeaseLost<StoredResponse>) {
            log.warn("{} {}: the response was sent but its completion was not recorded (the lease lapsed or the store"
                    + " failed); a retry may run the handler again", exchange.request.getMethod(),
                    pathOf(exchange.request));
            exchange.buffer.sendAsIs();
        } else if (outcome instanceof ProcessingOutcome.AlreadyProcessed<StoredResponse> done) {
            replay(done.result().orElse(null), exchange);
        } else if (outcome instanceof ProcessingOutcome.KeyReused<StoredResponse>) {
            reused(response);
        } else if (outcome instanceof ProcessingOutcome.InProgressElsewhere<StoredResponse> running) {
            response.setHeader("Retry-After", String.valueOf(secondsUntil(running.leaseExpiresAt())));
            writeProblem(response, Problem.IN_PROGRESS, "Request in progress", "a request with this " + keys.keyHeader()
                    + " is still being processed; retry after it has finished");
        } else if (outcome instanceof ProcessingOutcome.Failed<StoredResponse> failed) {
            failed(failed, exchange);
        } else {
            writeProblem(response, Problem.NOT_REPLAYABLE, "Key already used", "this " + keys.keyHeader()
                    + " was used by a request whose response cannot be replayed");
        }
    }

    private void failed(ProcessingOutcome.Failed<StoredResponse> failed, Exchange exchange)
            throws IOException, ServletException {
        Throwable cause = failed.cause();
        if (failed.key() == null) {
            writeProblem(exchange.response, Problem.KEY_INVALID, "Invalid " + keys.keyHeader(), String.valueOf(cause.getMessage()));
        } else if (cause instanceof ReleasedResponse || cause instanceof CancellationException) {
            exchange.buffer.sendAsIs();
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
                pathOf(exchange.request), failure.toString(), passThrough
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
            writeProblem(exchange.response, Problem.STORE_UNAVAILABLE, "Service unavailable",
                    "requests with an " + keys.keyHeader() + " cannot be processed now; retry later");
        }
    }

    private void replay(StoredResponse stored, Exchange exchange) throws IOException {
        HttpServletResponse response = exchange.response;
        if (stored == null) {
            writeProblem(response, Problem.NOT_REPLAYABLE, "Key already used", "this " + keys.keyHeader()
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
        writeProblem(response, Problem.KEY_REUSED, keys.keyHeader() + " reused", "this " + keys.keyHeader()
                + " was already used for a different request (method, path, query or body)");
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
        private ResponseBuffer buffer;
        private CompletableFuture<ProcessingOutcome<StoredResponse>> outcome;
        /** An asynchronous handler's response, completed by the dispatch that ends it. */
        private CompletableFuture<StoredResponse> pending;
        /** The container gave up on the asynchronous handler (timeout, error), which may still be running. */
        private volatile boolean abandoned;

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

        /** Waits, without a thread, for the dispatch that ends the asynchronous handler's response. */
        private CompletionStage<StoredResponse> awaitAsyncEnd() {
            pending = new CompletableFuture<>();
            request.setAttribute(ASYNC_EXCHANGE, this);
            request.getAsyncContext().addListener(new AsyncEnd());
            return pending;
        }

        private void settle(Exception failure) {
            pending.completeExceptionally(failure);
        }

        /** Marks a timed-out or failed handler abandoned; a request that ended without our last dispatch, too. */
        private final class AsyncEnd implements AsyncListener {
            @Override
            public void onTimeout(AsyncEvent event) {
                abandoned = true;
            }

            @Override
            public void onError(AsyncEvent event) {
                abandoned = true;
            }

            @Override
            public void onComplete(AsyncEvent event) {
                if (pending.isDone()) {
                    return;
                }
                if (!abandoned) {
                    log.error("{} {}: the asynchronous response completed without the dispatch that would store it"
                            + " (AsyncContext.complete() without dispatch?); its key is left to lapse with its lease,"
                            + " so a retry after that runs the handler again", request.getMethod(),
                            pathOf(request));
                }
                // The work's fate is unknown: leave the claim to lapse rather than release it under running work.
                pending.cancel(false);
            }

            @Override
            public void onStartAsync(AsyncEvent event) {
                event.getAsyncContext().addListener(this);   // a new round forgets its listeners
            }
        }
    }

    /**
     * The response buffered to be stored, up to what a record holds: past that, the buffered part goes to the
     * client and the rest streams through, so a large response costs no more memory than a record; it is then
     * stored without its body. It knows when the container will render an error page after us.
     */
    private static final class ResponseBuffer extends ContentCachingResponseWrapper {
        private static final int MAX_BUFFERED_BYTES = DedupLimits.MAX_RESULT_BYTES;

        private boolean errorSent;
        private boolean overflowed;
        private ServletOutputStream bounded;
        private PrintWriter writer;

        private ResponseBuffer(HttpServletResponse response) {
            super(response);
        }

        @Override
        public void sendError(int status) throws IOException {
            errorSent = true;
            super.sendError(status);
        }

        @Override
        public void sendError(int status, String message) throws IOException {
            errorSent = true;
            super.sendError(status, message);
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            if (bounded == null) {
                bounded = new BoundedStream(super.getOutputStream());
            }
            return bounded;
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            if (writer == null) {
                String encoding = getCharacterEncoding();
                writer = new PrintWriter(new OutputStreamWriter(getOutputStream(),
                        encoding == null ? "ISO-8859-1" : encoding), true);
            }
            return writer;
        }

        @Override
        public void flushBuffer() throws IOException {
            if (overflowed) {
                getResponse().flushBuffer();   // streaming through: the client gets what was written
            }
        }

        /** {@return the whole body as written, or null when it outgrew the buffer and went to the client} */
        private byte[] bodyOrNull() {
            if (writer != null) {
                writer.flush();
            }
            return overflowed ? null : getContentAsByteArray();
        }

        /** Sends the buffered body to the client; an error page is the container's to render. */
        private void sendAsIs() throws IOException {
            if (writer != null) {
                writer.flush();
            }
            if (!errorSent) {
                copyBodyToResponse();
            }
        }

        /** Buffers until the limit, then hands what it has to the client and writes through. */
        private final class BoundedStream extends ServletOutputStream {
            private final ServletOutputStream buffer;
            private ServletOutputStream client;

            private BoundedStream(ServletOutputStream buffer) {
                this.buffer = buffer;
            }

            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) throws IOException {
                if (client != null) {
                    client.write(bytes, offset, length);
                    return;
                }
                buffer.write(bytes, offset, length);
                if (getContentSize() > MAX_BUFFERED_BYTES) {
                    overflowed = true;
                    copyBodyToResponse(false);
                    client = getResponse().getOutputStream();
                }
            }

            @Override
            public void flush() throws IOException {
                if (client != null) {
                    client.flush();
                }
            }

            @Override
            public boolean isReady() {
                return client == null || client.isReady();
            }

            @Override
            public void setWriteListener(WriteListener listener) {
                (client != null ? client : buffer).setWriteListener(listener);
            }
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
