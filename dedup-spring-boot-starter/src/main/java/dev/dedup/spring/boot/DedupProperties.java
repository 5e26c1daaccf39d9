package dev.dedup.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The {@code dedup.*} settings: where the store is, how long claims and records live, and which HTTP endpoints take
 * an {@code Idempotency-Key}. Values are checked by the library when the beans are built, so a bad one fails the
 * start with the library's own message.
 */
@ConfigurationProperties("dedup")
public class DedupProperties {
    private String namespace;
    private Duration lease = Duration.ofSeconds(30);
    private Duration retention = Duration.ofHours(24);
    private final Store store = new Store();
    private final Http http = new Http();
    private final Annotation annotation = new Annotation();
    private final Metrics metrics = new Metrics();

    /** Creates the settings with their defaults. */
    public DedupProperties() {}

    /**
     * {@return the namespace the store's keys live in; null keeps the URI's or the store's default ({@code
     * default})}
     */
    public String getNamespace() {
        return namespace;
    }

    /**
     * Sets the namespace the store's keys live in; with {@code dedup.store.uri} it overrides the URI's own.
     *
     * @param namespace 1 to 64 of {@code A-Z a-z 0-9 . _ -}
     */
    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    /** {@return how long a claim holds before another request may take the key over; heartbeats renew it} */
    public Duration getLease() {
        return lease;
    }

    /**
     * Sets how long a claim holds (default 30 s); longer than a store call, since heartbeats renew it.
     *
     * @param lease 1 ms to 366 days
     */
    public void setLease(Duration lease) {
        this.lease = lease;
    }

    /** {@return how long a completed key and its stored response are kept for replay} */
    public Duration getRetention() {
        return retention;
    }

    /**
     * Sets how long a completed key and its stored response are kept (default 24 h): longer than your clients
     * retry.
     *
     * @param retention 1 ms to 366 days
     */
    public void setRetention(Duration retention) {
        this.retention = retention;
    }

    /** {@return where the store is} */
    public Store getStore() {
        return store;
    }

    /** {@return the HTTP {@code Idempotency-Key} filter's settings} */
    public Http getHttp() {
        return http;
    }

    /** {@return the {@link Idempotent} methods' settings} */
    public Annotation getAnnotation() {
        return annotation;
    }

    /** {@return the store's Micrometer metrics settings} */
    public Metrics getMetrics() {
        return metrics;
    }

    /** The {@link Idempotent} methods' settings. */
    public static class Annotation {
        private boolean enabled = true;
        private int order;

        /** Creates the settings with their defaults. */
        public Annotation() {}

        /** {@return whether {@link Idempotent} methods are intercepted} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether {@link Idempotent} methods are intercepted (default true, when Jackson 3 is on the class path).
         *
         * @param enabled false to leave the annotation without effect
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** {@return the interception's order among the method's other advice} */
        public int getOrder() {
            return order;
        }

        /**
         * Sets the interception's order among other advice (default 0, outside {@code @Transactional}, whose order is
         * the lowest precedence): lower runs first.
         *
         * @param order the advisor's order
         */
        public void setOrder(int order) {
            this.order = order;
        }
    }

    /** The store's Micrometer metrics settings. */
    public static class Metrics {
        private boolean enabled = true;

        /** Creates the settings with their defaults. */
        public Metrics() {}

        /** {@return whether the store bean is wrapped in {@code MeteredDedupStore}} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether every {@code DedupStore} bean is wrapped in dedup-micrometer's {@code MeteredDedupStore} when
         * that module and a {@code MeterRegistry} bean are present (default true).
         *
         * @param enabled false to leave the store unmetered
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Where the store is: a URI, or else the application's {@code DataSource} or Lettuce {@code RedisClient}. */
    public static class Store {
        private String uri;
        private boolean createSchema;
        private String dynamodbTable;
        private String mongodbDatabase;
        private Duration timeout;

        /** Creates the store settings with their defaults. */
        public Store() {}

        /** {@return the store URI opened with {@code DedupStores.open}, or null to build the store from a bean} */
        public String getUri() {
            return uri;
        }

        /**
         * Sets the store URI ({@code postgresql://...}, {@code redis://...}, {@code memory:} ...); it wins over the
         * application's {@code DataSource} and {@code RedisClient}.
         *
         * @param uri a URI that {@code dev.dedup.DedupStores.open} accepts
         */
        public void setUri(String uri) {
            this.uri = uri;
        }

        /** {@return whether the store creates its table (index, purge job) at start when missing} */
        public boolean isCreateSchema() {
            return createSchema;
        }

        /**
         * Sets whether the store creates (or upgrades) its table at start (default false: it only checks the table,
         * and a missing one fails the start with its DDL): a store built on the application's {@code DataSource},
         * {@code DynamoDbClient} or {@code MongoClient}, and a store opened by URI whose scheme takes
         * {@code createSchema} (PostgreSQL, MySQL/MariaDB), where {@code true} wins over the URI's own.
         *
         * @param createSchema true to create the table
         */
        public void setCreateSchema(boolean createSchema) {
            this.createSchema = createSchema;
        }

        /** {@return the table of a DynamoDB store built on the application's {@code DynamoDbClient}} */
        public String getDynamodbTable() {
            return dynamodbTable;
        }

        /**
         * Sets the table of a DynamoDB store built on the application's {@code DynamoDbClient}; with
         * {@code dedup.store.create-schema=true} it is created when missing.
         *
         * @param dynamodbTable 3 to 255 of {@code A-Z a-z 0-9 _ . -}
         */
        public void setDynamodbTable(String dynamodbTable) {
            this.dynamodbTable = dynamodbTable;
        }

        /** {@return the database of a MongoDB store built on the application's {@code MongoClient}} */
        public String getMongodbDatabase() {
            return mongodbDatabase;
        }

        /**
         * Sets the database of a MongoDB store built on the application's {@code MongoClient}.
         *
         * @param mongodbDatabase the database's name
         */
        public void setMongodbDatabase(String mongodbDatabase) {
            this.mongodbDatabase = mongodbDatabase;
        }

        /** {@return the longest any call waits on the store the starter builds, or null for each store's default} */
        public Duration getTimeout() {
            return timeout;
        }

        /**
         * Sets the longest a call waits on the store, for every store the starter builds (on the application's
         * {@code DataSource}, Redis or Spring Data Redis connection, {@code MongoClient} or {@code DynamoDbClient},
         * or by URI, where it wins over the URI's {@code timeout}), whatever the client or pool is set to: an
         * application's HikariCP waits 30 s for a connection. The health check waits no longer. Unset, each store
         * keeps its default (5 s PostgreSQL and MongoDB, 2 s Redis; on a {@code DynamoDbClient}, the client's).
         *
         * @param timeout within the store's range (PostgreSQL 1 s to 10 min, Redis 10 ms to 5 min, ...)
         */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /** The HTTP {@code Idempotency-Key} filter's settings. */
    public static class Http {
        /** The longest {@code dedup.http.in-progress-wait}: a servlet thread waits meanwhile. */
        private boolean enabled = true;
        private List<String> paths = new ArrayList<>();
        private List<String> methods = new ArrayList<>(List.of("POST", "PATCH"));
        private String keyHeader = "Idempotency-Key";
        private String tenantHeader;
        private List<String> replayHeaders = new ArrayList<>(List.of("Content-Type", "Location"));
        private String replayedHeader = "Idempotent-Replayed";
        private boolean storeServerErrors;
        private List<Integer> releaseStatuses = new ArrayList<>(List.of(408, 409, 423, 425, 429));
        private AnonymousCallers anonymousCallers = AnonymousCallers.REFUSE;
        private boolean failOpen;
        private boolean keyRequired = true;
        private DataSize maxBodySize = DataSize.ofMegabytes(1);
        private int filterOrder;
        private String problemTypeBase;
        private Duration inProgressWait = Duration.ZERO;
        private Map<String, Duration> retentionByPath = new LinkedHashMap<>();

        /** Creates the HTTP settings with their defaults. */
        public Http() {}

        /** {@return whether the filter is registered (it protects only {@link #getPaths() paths})} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether the filter is registered (default true).
         *
         * @param enabled false to leave every endpoint alone
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** {@return the protected path patterns} */
        public List<String> getPaths() {
            return paths;
        }

        /**
         * Sets the protected path patterns, in Spring's {@code PathPattern} syntax ({@code /payments},
         * {@code /orders/**}), matched against the path inside the application's context path. None by default:
         * the filter protects nothing until paths are given.
         *
         * @param paths path patterns
         */
        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        /** {@return the protected HTTP methods} */
        public List<String> getMethods() {
            return methods;
        }

        /**
         * Sets the protected HTTP methods (default POST and PATCH, the methods that are not idempotent by
         * definition).
         *
         * @param methods method names, upper case
         */
        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        /** {@return the request header that carries the key} */
        public String getKeyHeader() {
            return keyHeader;
        }

        /**
         * Sets the request header that carries the key (default {@code Idempotency-Key}).
         *
         * @param keyHeader a header name
         */
        public void setKeyHeader(String keyHeader) {
            this.keyHeader = keyHeader;
        }

        /** {@return the request header whose value scopes keys per tenant, or null} */
        public String getTenantHeader() {
            return tenantHeader;
        }

        /**
         * Sets a request header whose value scopes keys (say {@code X-Tenant-Id}); keys are always scoped by the
         * authenticated principal, when there is one. None by default.
         *
         * @param tenantHeader a header name, or null
         */
        public void setTenantHeader(String tenantHeader) {
            this.tenantHeader = tenantHeader;
        }

        /** {@return the response headers stored with the response and replayed} */
        public List<String> getReplayHeaders() {
            return replayHeaders;
        }

        /**
         * Sets the response headers stored and replayed with the status and body (default {@code Content-Type} and
         * {@code Location}). Never list headers that carry secrets, such as {@code Set-Cookie}.
         *
         * @param replayHeaders header names
         */
        public void setReplayHeaders(List<String> replayHeaders) {
            this.replayHeaders = replayHeaders;
        }

        /** {@return the response header, set to {@code true}, that marks a replayed response} */
        public String getReplayedHeader() {
            return replayedHeader;
        }

        /**
         * Sets the response header, set to {@code true}, that marks a replayed response (default
         * {@code Idempotent-Replayed}).
         *
         * @param replayedHeader a header name
         */
        public void setReplayedHeader(String replayedHeader) {
            this.replayedHeader = replayedHeader;
        }

        /** {@return whether 5xx responses are stored and replayed instead of releasing the key} */
        public boolean isStoreServerErrors() {
            return storeServerErrors;
        }

        /**
         * Sets whether 5xx responses are stored and replayed (default false: a 5xx releases the key, so a retry
         * runs the handler again). 2xx, 3xx and 4xx responses are always stored; an exception always releases.
         *
         * @param storeServerErrors true to store 5xx responses
         */
        public void setStoreServerErrors(boolean storeServerErrors) {
            this.storeServerErrors = storeServerErrors;
        }

        /** {@return the 4xx statuses that release the key instead of being stored} */
        public List<Integer> getReleaseStatuses() {
            return releaseStatuses;
        }

        /**
         * Sets the 4xx statuses that say "try again later" rather than "no": a response with one of them releases
         * the key, as a 5xx does, so the client's retry runs the handler again instead of replaying it for the
         * whole retention (default 408, 409, 423, 425, 429: timeout, conflict such as an optimistic lock, locked,
         * too early, too many requests).
         *
         * @param releaseStatuses HTTP status codes
         */
        public void setReleaseStatuses(List<Integer> releaseStatuses) {
            this.releaseStatuses = releaseStatuses;
        }

        /** {@return what a protected request without an authenticated principal gets} */
        public AnonymousCallers getAnonymousCallers() {
            return anonymousCallers;
        }

        /**
         * Sets what a protected request without an authenticated principal gets (default {@code refuse}: 401).
         * Keys are scoped by the principal; anonymous callers would all share one scope, where a guessed key
         * replays another client's response. {@code shared} accepts that, for services with no authentication
         * in front of them, or whose keys are unguessable and private to each client.
         *
         * @param anonymousCallers {@code refuse} or {@code shared}
         */
        public void setAnonymousCallers(AnonymousCallers anonymousCallers) {
            this.anonymousCallers = anonymousCallers;
        }

        /** {@return whether a protected request without a key is refused (400) rather than run unprotected} */
        public boolean isKeyRequired() {
            return keyRequired;
        }

        /**
         * Sets whether a protected request must carry the key header (default true: without one it is answered 400
         * and its handler does not run). With false, a request without a key runs without deduplication, as an API
         * whose clients opt in to retries per request; each such request is counted. A malformed key is still 400.
         *
         * @param keyRequired false to run requests without a key unprotected
         */
        public void setKeyRequired(boolean keyRequired) {
            this.keyRequired = keyRequired;
        }

        /** {@return whether a protected request runs unprotected when the store cannot be reached} */
        public boolean isFailOpen() {
            return failOpen;
        }

        /**
         * Sets whether a protected request runs without deduplication when the store cannot be reached (default
         * false: it is answered 503, so nothing can run twice). Each such request is logged and counted.
         *
         * @param failOpen true to run requests when the store is down
         */
        public void setFailOpen(boolean failOpen) {
            this.failOpen = failOpen;
        }

        /** {@return the largest request body a protected endpoint accepts} */
        public DataSize getMaxBodySize() {
            return maxBodySize;
        }

        /**
         * Sets the largest request body a protected endpoint accepts (default 1 MB; larger is answered 413): the
         * body is read into memory to fingerprint it.
         *
         * @param maxBodySize a size
         */
        public void setMaxBodySize(DataSize maxBodySize) {
            this.maxBodySize = maxBodySize;
        }

        /** {@return the filter's order among the servlet filters} */
        public int getFilterOrder() {
            return filterOrder;
        }

        /**
         * Sets the filter's order (default 0): after Spring Security's filter chain (-100), so the principal that
         * scopes keys is known.
         *
         * @param filterOrder a servlet filter order
         */
        public void setFilterOrder(int filterOrder) {
            this.filterOrder = filterOrder;
        }

        /** {@return where the filter's problem types are documented; null for dedup's own page} */
        public String getProblemTypeBase() {
            return problemTypeBase;
        }

        /**
         * Sets the page that documents the filter's problem responses (default dedup's docs/spring-boot.md): each
         * problem's {@code type} is this URI and {@code #} the problem's anchor, for example
         * {@code https://api.example.com/docs/errors#idempotency-key-missing}.
         *
         * @param problemTypeBase an absolute URI without a fragment
         */
        public void setProblemTypeBase(String problemTypeBase) {
            this.problemTypeBase = problemTypeBase;
        }

        /** {@return how long a duplicate of a running request waits for its response before a 409} */
        public Duration getInProgressWait() {
            return inProgressWait;
        }

        /**
         * Sets how long a request whose key another request still holds waits for that request's response, to
         * replay it, before it is answered 409 (default 0: at once). The wait holds a servlet thread: keep it
         * short, around the handler's usual time.
         *
         * @param inProgressWait 0 to 60 seconds
         */
        public void setInProgressWait(Duration inProgressWait) {
            if (inProgressWait == null || inProgressWait.isNegative()
                    || inProgressWait.compareTo(InProgressWait.LONGEST) > 0) {
                throw new IllegalArgumentException("dedup.http.in-progress-wait must be from 0 to "
                        + InProgressWait.LONGEST.toSeconds() + "s, but was " + inProgressWait);
            }
            this.inProgressWait = inProgressWait;
        }

        /** {@return the retention of the responses on some paths, by path pattern} */
        public Map<String, Duration> getRetentionByPath() {
            return retentionByPath;
        }

        /**
         * Sets how long the responses of some paths are kept, by path pattern (first match wins; other protected
         * paths keep {@code dedup.retention}), for example
         * {@code dedup.http.retention-by-path.[/payments/**]=7d}: the brackets keep the pattern's characters.
         *
         * @param retentionByPath retentions by path pattern, each from 1 ms to 366 days
         */
        public void setRetentionByPath(Map<String, Duration> retentionByPath) {
            this.retentionByPath = retentionByPath;
        }

        /** What a protected request without an authenticated principal gets. */
        public enum AnonymousCallers {
            /** A 401 problem; the handler does not run. */
            REFUSE,
            /** All anonymous callers share one key scope. */
            SHARED
        }
    }
}
