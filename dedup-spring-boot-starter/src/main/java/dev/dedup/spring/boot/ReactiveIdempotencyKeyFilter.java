package dev.dedup.spring.boot;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.spring.boot.DedupProperties.Http.AnonymousCallers;
import dev.dedup.spring.boot.Problems.Problem;
import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The {@link IdempotencyKeyFilter}'s semantics on WebFlux, without blocking a thread: the claim, the heartbeats and
 * the settlement go through the store's {@link AsyncDedupStore} (native on Redis, DynamoDB and MongoDB; on an
 * executor of the starter's for the JDBC stores), the request body is read into memory to fingerprint it and
 * handed on from there, and the response is collected, stored, then sent.
 *
 * <ul>
 *   <li>No key, or a malformed one: 400. No authenticated principal (unless
 *       {@code dedup.http.anonymous-callers=shared}): 401. A body over {@code dedup.http.max-body-size}: 413.</li>
 *   <li>The key of a completed request, sent with another method, path, query or body: 422.</li>
 *   <li>The key of a request still running: 409 with {@code Retry-After}; with {@code dedup.http.in-progress-wait}
 *       the duplicate first waits that long (on a timer, holding no thread) for its response, and replays it.</li>
 *   <li>2xx, 3xx and 4xx responses are stored; a 5xx (unless {@code dedup.http.store-server-errors}), a status in
 *       {@code dedup.http.release-statuses} or an error releases the key, so the retry runs again.</li>
 *   <li>The store unreachable: 503, or the request runs unprotected with {@code dedup.http.fail-open=true}.</li>
 * </ul>
 */
public class ReactiveIdempotencyKeyFilter implements WebFilter, Ordered {
    private static final Logger log = LoggerFactory.getLogger(ReactiveIdempotencyKeyFilter.class);

    private final AsyncDedupStore store;
    private final DedupProperties.Http settings;
    private final Duration lease;
    private final ProtectedRequests protectedRequests;
    private final PathRetentions retentions;
    private final IdempotencyKeys keys;
    private final Problems problems;
    private final StoredResponseCodec codec = new StoredResponseCodec();
    private final StoreOutageListener outages;
    private volatile boolean warnedAboutAnonymousCallers;

    /**
     * Creates the filter.
     *
     * @param store the store's non-blocking face, which holds the keys and the stored responses
     * @param properties the settings: {@code dedup.lease}, {@code dedup.retention} and {@code dedup.http.*}
     * @param outages told of each request that met an unreachable store
     * @throws IllegalArgumentException if the lease is out of range
     * @throws dev.dedup.DedupConfigurationException if {@code dedup.http.problem-type-base} is no absolute URI
     */
    public ReactiveIdempotencyKeyFilter(AsyncDedupStore store, DedupProperties properties,
            StoreOutageListener outages) {
        this.store = Objects.requireNonNull(store, "store");
        this.settings = properties.getHttp();
        this.lease = DedupLimits.checkDuration("dedup.lease", properties.getLease());
        this.protectedRequests = new ProtectedRequests(settings.getMethods(), settings.getPaths());
        this.retentions = new PathRetentions(properties.getRetention(), settings.getRetentionByPath());
        this.keys = new IdempotencyKeys(settings.getKeyHeader(), settings.getTenantHeader());
        this.problems = Problems.documentedAt(settings.getProblemTypeBase());
        this.outages = Objects.requireNonNull(outages, "outages");
    }

    @Override
    public int getOrder() {
        return settings.getFilterOrder();
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        String path = request.getPath().pathWithinApplication().value();
        if (!protectedRequests.matches(request.getMethod().name(), path)) {
            return chain.filter(exchange);
        }
        return exchange.getPrincipal().map(Optional::of).defaultIfEmpty(Optional.empty())
                .flatMap(principal -> admit(exchange, chain, principal.map(Principal::getName).orElse(null)));
    }

    /** The checks before the claim: key, principal, body size. */
    private Mono<Void> admit(ServerWebExchange exchange, WebFilterChain chain, String principal) {
        ServerHttpRequest request = exchange.getRequest();
        String clientKey;
        try {
            clientKey = keys.clientKey(request.getHeaders().get(keys.keyHeader()));
        } catch (IllegalArgumentException e) {
            return problem(exchange, Problem.KEY_INVALID, "Invalid " + keys.keyHeader(), e.getMessage());
        }
        if (clientKey == null && !settings.isKeyRequired()) {
            outages.ranWithoutKey();
            return chain.filter(exchange);
        }
        if (principal == null && settings.getAnonymousCallers() == AnonymousCallers.REFUSE) {
            warnAboutAnonymousCallers(request);
            return problem(exchange, Problem.UNAUTHENTICATED, "Authentication required", "requests with an "
                    + keys.keyHeader() + " on this endpoint must come from an authenticated caller");
        }
        if (clientKey == null) {
            return problem(exchange, Problem.KEY_MISSING, keys.keyHeader() + " required",
                    "this endpoint requires an " + keys.keyHeader() + " header, a unique value per operation");
        }
        String tenant = keys.tenantHeader() == null ? null : request.getHeaders().getFirst(keys.tenantHeader());
        String key = keys.scopedKey(principal, tenant, clientKey);
        int maxBody = Math.toIntExact(Math.min(Integer.MAX_VALUE, settings.getMaxBodySize().toBytes()));
        return DataBufferUtils.join(request.getBody(), maxBody)
                .map(ReactiveIdempotencyKeyFilter::bytesOf)
                .defaultIfEmpty(new byte[0])
                .flatMap(body -> claim(new Call(exchange, chain, key, body,
                        new InProgressWait(settings.getInProgressWait()))))
                .onErrorResume(DataBufferLimitException.class, tooLarge -> problem(exchange,
                        Problem.BODY_TOO_LARGE, "Request body too large", "a request with an " + keys.keyHeader()
                                + " may carry at most " + settings.getMaxBodySize().toBytes() + " bytes"));
    }

    private Mono<Void> claim(Call call) {
        // The answer arrives on the store client's own thread (Lettuce's event loop, or the starter's executor for a
        // JDBC store): the handler runs on Reactor's parallel threads instead, where it cannot hold up the store.
        return Mono.defer(() -> Mono.fromCompletionStage(store.claim(call.key, lease, call.fingerprint)))
                .publishOn(Schedulers.parallel())
                .materialize()
                .flatMap(signal -> {
                    if (signal.hasError()) {
                        return storeUnavailable(call, signal.getThrowable());
                    }
                    ClaimResult result = Objects.requireNonNull(signal.get());
                    return result instanceof Claim claim ? run(call, claim) : duplicate(call, (Duplicate) result);
                });
    }

    private Mono<Void> duplicate(Call call, Duplicate duplicate) {
        Optional<byte[]> fingerprint = duplicate.fingerprint();
        if (fingerprint.isPresent() && !Arrays.equals(fingerprint.get(), call.fingerprint)) {
            return reused(call.exchange);
        }
        if (duplicate.state() == RecordState.IN_PROGRESS) {
            Duration pause = call.pauses.nextPause();
            if (pause != null) {
                return Mono.delay(pause).then(Mono.defer(() -> claim(call)));
            }
            call.exchange.getResponse().getHeaders().set(HttpHeaders.RETRY_AFTER,
                    String.valueOf(secondsUntil(duplicate.expiresAt())));
            return problem(call.exchange, Problem.IN_PROGRESS, "Request in progress", "a request with this "
                    + keys.keyHeader() + " is still being processed; retry after it has finished");
        }
        if (duplicate.state() == RecordState.COMPLETED && duplicate.result().isPresent()) {
            StoredResponse stored = codec.decode(duplicate.result().get());
            return stored.matches(call.fingerprint) ? replay(call.exchange, stored) : reused(call.exchange);
        }
        return problem(call.exchange, Problem.NOT_REPLAYABLE, "Key already used", "this " + keys.keyHeader()
                + " was used by a request whose response cannot be replayed");
    }

    /** The rest of the chain under a won claim, heartbeated; its response is settled before it is sent. */
    private Mono<Void> run(Call call, Claim claim) {
        Settling settling = new Settling(call, claim);
        ServerWebExchange decorated = call.exchange.mutate()
                .request(new ServerHttpRequestDecorator(call.exchange.getRequest()) {
                    @Override
                    public Flux<DataBuffer> getBody() {
                        return Flux.defer(() -> Flux.just(call.exchange.getResponse().bufferFactory()
                                .wrap(call.body)));
                    }
                })
                .response(settling.response())
                .build();
        Disposable heartbeats = Flux.interval(lease.dividedBy(3))
                .concatMap(tick -> Mono.fromCompletionStage(() -> store.extend(claim, lease))
                        .onErrorResume(failure -> {
                            log.warn("heartbeat of {} failed: {}", call.key, failure.toString());
                            return Mono.empty();
                        }))
                .subscribe();
        return call.chain.filter(decorated)
                .then(Mono.defer(settling::settleUnwritten))
                .onErrorResume(failure -> settling.releaseAfter(failure))
                .doFinally(signal -> heartbeats.dispose());
    }

    private Mono<Void> storeUnavailable(Call call, Throwable failure) {
        boolean passThrough = settings.isFailOpen();
        ServerHttpRequest request = call.exchange.getRequest();
        log.warn("{} {}: the dedup store is unavailable ({}); {}", request.getMethod(), request.getPath(),
                failure.toString(), passThrough ? "running the request without deduplication"
                        + " (dedup.http.fail-open=true)" : "answering 503");
        try {
            outages.storeUnavailable(passThrough, failure);
        } catch (RuntimeException e) {
            log.warn("the store outage listener failed", e);
        }
        if (passThrough) {
            return call.chain.filter(call.exchange.mutate()
                    .request(new ServerHttpRequestDecorator(request) {
                        @Override
                        public Flux<DataBuffer> getBody() {
                            return Flux.defer(() -> Flux.just(call.exchange.getResponse().bufferFactory()
                                    .wrap(call.body)));
                        }
                    }).build());
        }
        return problem(call.exchange, Problem.STORE_UNAVAILABLE, "Service unavailable",
                "requests with an " + keys.keyHeader() + " cannot be processed now; retry later");
    }

    private Mono<Void> replay(ServerWebExchange exchange, StoredResponse stored) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
        stored.headers().forEach((name, values) -> response.getHeaders().put(name, values));
        response.getHeaders().set(settings.getReplayedHeader(), "true");
        response.getHeaders().setContentLength(stored.body().length);
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(stored.body())));
    }

    private Mono<Void> reused(ServerWebExchange exchange) {
        return problem(exchange, Problem.KEY_REUSED, keys.keyHeader() + " reused", "this " + keys.keyHeader()
                + " was already used for a different request (method, path, query or body)");
    }

    private Mono<Void> problem(ServerWebExchange exchange, Problem problem, String title, String detail) {
        ServerHttpResponse response = exchange.getResponse();
        byte[] body = problems.body(problem, title, detail);
        response.setStatusCode(HttpStatusCode.valueOf(problem.status));
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
    }

    private void warnAboutAnonymousCallers(ServerHttpRequest request) {
        if (!warnedAboutAnonymousCallers) {
            warnedAboutAnonymousCallers = true;
            log.warn("{} {}: a request without an authenticated principal was refused (401): keys are scoped by the"
                    + " principal, and anonymous callers would share one scope. Authenticate before this filter, or"
                    + " set dedup.http.anonymous-callers=shared to accept that", request.getMethod(),
                    request.getPath());
        }
    }

    private static long secondsUntil(Instant expiresAt) {
        long millis = Duration.between(Instant.now(), expiresAt).toMillis();
        return Math.max(1, (millis + 999) / 1000);
    }

    private static byte[] bytesOf(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            return bytes;
        } finally {
            DataBufferUtils.release(buffer);
        }
    }

    /** One protected request on its way through the filter. */
    private record Call(ServerWebExchange exchange, WebFilterChain chain, String key, byte[] body,
            InProgressWait pauses, byte[] fingerprint) {
        Call(ServerWebExchange exchange, WebFilterChain chain, String key, byte[] body, InProgressWait pauses) {
            this(exchange, chain, key, body, pauses, RequestFingerprint.of(exchange.getRequest().getMethod().name(),
                    exchange.getRequest().getPath().pathWithinApplication().value(),
                    exchange.getRequest().getURI().getRawQuery(), body));
        }
    }

    /**
     * The response of a won claim: collected when the handler writes it, stored (or the key released, by its
     * status) and only then sent, so a retry that sees the key completed always finds the response.
     */
    private final class Settling {
        private final Call call;
        private final Claim claim;
        private final AtomicBoolean settled = new AtomicBoolean();

        private Settling(Call call, Claim claim) {
            this.call = call;
            this.claim = claim;
        }

        private ServerHttpResponse response() {
            return new ServerHttpResponseDecorator(call.exchange.getResponse()) {
                @Override
                public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
                    return DataBufferUtils.join(Flux.from(body))
                            .map(ReactiveIdempotencyKeyFilter::bytesOf)
                            .defaultIfEmpty(new byte[0])
                            .flatMap(bytes -> settle(getDelegate(), bytes)
                                    .then(Mono.defer(() -> getDelegate().writeWith(
                                            Mono.fromSupplier(() -> bufferFactory().wrap(bytes))))));
                }

                @Override
                public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
                    return writeWith(Flux.from(body).concatMap(Flux::from));
                }

                @Override
                public Mono<Void> setComplete() {
                    return settle(getDelegate(), new byte[0]).then(Mono.defer(getDelegate()::setComplete));
                }
            };
        }

        /** The handler ended without writing (or committing) its response: settle with what it set. */
        private Mono<Void> settleUnwritten() {
            return settle(call.exchange.getResponse(), new byte[0]);
        }

        private Mono<Void> releaseAfter(Throwable failure) {
            if (!settled.compareAndSet(false, true)) {
                return Mono.error(failure);
            }
            return Mono.fromCompletionStage(() -> store.release(claim))
                    .onErrorResume(releaseFailure -> {
                        failure.addSuppressed(releaseFailure);
                        return Mono.empty();
                    })
                    .then(Mono.error(failure));
        }

        private Mono<Void> settle(ServerHttpResponse response, byte[] body) {
            if (!settled.compareAndSet(false, true)) {
                return Mono.empty();
            }
            int status = response.getStatusCode() == null ? 200 : response.getStatusCode().value();
            if ((status >= 500 && !settings.isStoreServerErrors()) || settings.getReleaseStatuses().contains(status)) {
                return Mono.fromCompletionStage(() -> store.release(claim)).then()
                        .onErrorResume(failure -> {
                            log.warn("releasing {} failed; it lapses with its lease: {}", call.key, failure.toString());
                            return Mono.empty();
                        });
            }
            StoredResponse stored = new StoredResponse(call.fingerprint, status, replayHeaders(response), body, false);
            // A response larger than a record holds is stored without its body: its replay carries status and headers.
            byte[] record = codec.encode(stored);
            if (record.length > DedupLimits.MAX_RESULT_BYTES) {
                record = codec.encode(stored.withoutBody());
            }
            byte[] toStore = record;
            return Mono.fromCompletionStage(() -> store.complete(claim, retentions.of(
                            call.exchange.getRequest().getPath().pathWithinApplication().value()), toStore))
                    .doOnNext(completed -> {
                        if (!completed) {
                            log.warn("{} {}: the response was sent but its completion was not recorded (the lease"
                                    + " lapsed); a retry may run the handler again", call.exchange.getRequest()
                                    .getMethod(), call.exchange.getRequest().getPath());
                        }
                    })
                    .onErrorResume(failure -> {
                        log.warn("{} {}: the response was sent but its completion was not recorded ({}); a retry"
                                + " may run the handler again", call.exchange.getRequest().getMethod(),
                                call.exchange.getRequest().getPath(), failure.toString());
                        return Mono.empty();
                    })
                    .then();
        }

        private Map<String, List<String>> replayHeaders(ServerHttpResponse response) {
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (String name : settings.getReplayHeaders()) {
                List<String> values = response.getHeaders().get(name);
                if (values != null && !values.isEmpty()) {
                    headers.put(name, List.copyOf(values));
                }
            }
            return headers;
        }
    }
}
