package dev.dedup.store.dynamodb;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import dev.dedup.spi.ContentionRetry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * A {@link dev.dedup.DedupStore} on DynamoDB, through the AWS SDK for Java v2.
 *
 * <p>A claim is one conditional {@code PutItem}: it writes the item when it is absent or expired
 * ({@code attribute_not_exists(pk) OR expires_at_ms <= :now}); {@code ConditionalCheckFailedException} means a live
 * item holds the key, which is a duplicate, never an error. The existing item comes back in the same call where
 * the service supports {@code ReturnValuesOnConditionCheckFailure}, else from one consistent {@code GetItem}.
 *
 * <p>The SDK resends a request whose reply was lost or late, so a write may meet its own first attempt. A refused
 * claim whose item carries the claim's own owner token is the caller's claim, not a duplicate; a refused complete,
 * fail, extend or release that the SDK sent more than once succeeded iff the item shows exactly what it asked for
 * under the caller's owner (or, for release, is gone). A claim whose key changes under it (released or expired
 * between the put and the read) tries again until decided or {@link Builder#claimDeadline} passes. A failed
 * {@code claimAll} releases the claims it had won before it throws ({@link DynamoDbBatchSettlement}).
 *
 * <p>{@code settleAll} sends each settlement's own conditional UpdateItem or DeleteItem, concurrently through the
 * async client when the store has one (one round trip of wall time per batchConcurrency settlements), else in turn:
 * a transaction would fail whole when one claim was lost, and each settlement must be decided alone.
 *
 * <p>With an {@link Builder#asyncClient}, {@link #async()} is native ({@link DynamoDbAsyncBackend}): the same
 * requests and rules, sent on the async client and finished in its callbacks, so no thread waits for a reply.
 *
 * <p>DynamoDB conditions have no server clock, so "now" is this store's {@link Clock}: application servers must keep
 * their clocks within a small skew of each other (NTP), and leases must be much longer than that skew. TTL deletion
 * only cleans up; it can lag by days and never decides a claim.
 */
public final class DynamoDbDedupStore extends AbstractDedupStore {
    static final String STORE = "DynamoDB dedup store";
    /** How long a claim keeps retrying a key that changes under it, when the client sets no apiCallTimeout. */
    static final Duration DEFAULT_CLAIM_DEADLINE = Duration.ofSeconds(2);

    private final DynamoDbClient client;
    private final DynamoDbRequests requests;
    private final int batchConcurrency;
    private final Duration claimDeadline;
    private final Runnable onClose;
    private final DynamoDbAsyncBackend asyncBackend;

    private DynamoDbDedupStore(Builder builder) {
        super(builder.namespace);
        this.client = builder.client;
        this.requests = new DynamoDbRequests(builder.table, builder.namespace, builder.clock, builder.timeout);
        this.batchConcurrency = builder.batchConcurrency;
        this.claimDeadline = builder.claimDeadline != null ? builder.claimDeadline
                : builder.timeout != null ? builder.timeout : callTimeoutOf(builder.client);
        this.onClose = builder.onClose;
        this.asyncBackend = builder.asyncClient == null ? null : new DynamoDbAsyncBackend(this, builder.asyncClient);
    }

    /**
     * A store on the application's client and table (create it with {@link DynamoDbDedupTables#create}).
     *
     * @param client the sync client; the store never closes it
     * @param table the table's name, 3 to 255 of {@code A-Z a-z 0-9 _ . -}; several namespaces may share one table
     * @return a builder for namespace {@code default} on the system clock
     * @throws IllegalArgumentException if {@code table} is not a valid DynamoDB table name
     */
    public static Builder builder(DynamoDbClient client, String table) {
        return new Builder(client, table);
    }

    /** {@return the table's name} */
    public String table() {
        return requests.table();
    }

    /** Native with an {@link Builder#asyncClient}: the same requests, finished in the SDK's callbacks. */
    @Override
    protected AsyncBackend asyncBackend() {
        return asyncBackend; // null without an async client: async() then points at AsyncDedupStore.onExecutor
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        ContentionRetry retry = claimRetry();
        while (true) {
            Instant expiresAt = requests.now().plus(lease);
            try {
                client.putItem(requests.claim(key, owner, expiresAt, fingerprint));
                return requests.claimed(key, owner, expiresAt);
            } catch (ConditionalCheckFailedException taken) {
                Map<String, AttributeValue> item = DynamoDbRequests.refusedItem(taken);
                ClaimResult decided = requests.decide(key, owner, item != null ? item : readConsistently(key, "claim"));
                if (decided != null) {
                    return decided;
                }
            } catch (RuntimeException e) {
                throw DynamoDbErrors.translate("claim", e, table());
            }
            // The item expired or vanished between the put and the read: another writer made progress.
            retry.pauseOrGiveUp(STORE, "claim in namespace '" + namespace() + "'");
        }
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        Map<String, CompletableFuture<ClaimResult>> pending = asyncBackend == null
                ? claimInTurn(ownerByKey, lease) : claimConcurrently(ownerByKey, lease);
        Map<String, ClaimResult> byKey = new DynamoDbBatchSettlement(this, ownerByKey, lease).settle(pending);
        return inInputOrder(keys, byKey);
    }

    /** Without an async client: one key after another, stopping at the first failure. */
    private Map<String, CompletableFuture<ClaimResult>> claimInTurn(Map<String, String> ownerByKey, Duration lease) {
        Map<String, CompletableFuture<ClaimResult>> pending = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : ownerByKey.entrySet()) {
            try {
                pending.put(entry.getKey(), CompletableFuture.completedFuture(
                        doClaim(entry.getKey(), entry.getValue(), lease, null)));
            } catch (RuntimeException e) {
                pending.put(entry.getKey(), CompletableFuture.failedFuture(e));
                break;
            }
        }
        return pending;
    }

    /**
     * DynamoDB has no conditional batch write: the conditional puts run concurrently through the async client, at
     * most batchConcurrency in flight. An interrupt stops sending more; what was sent is still settled.
     */
    private Map<String, CompletableFuture<ClaimResult>> claimConcurrently(Map<String, String> ownerByKey,
            Duration lease) {
        Semaphore inFlight = new Semaphore(batchConcurrency);
        Map<String, CompletableFuture<ClaimResult>> pending = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : ownerByKey.entrySet()) {
            try {
                inFlight.acquire();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                pending.put(entry.getKey(), CompletableFuture.failedFuture(
                        new DedupStoreException(STORE + " claimAll interrupted", e, true)));
                break;
            }
            CompletableFuture<ClaimResult> claim = asyncBackend.claim(entry.getKey(), entry.getValue(), lease, null);
            claim.whenComplete((result, failure) -> inFlight.release());
            pending.put(entry.getKey(), claim);
        }
        return pending;
    }

    /** The item as it is now, or null; for the checks made after a refused write (outside its try). */
    private Map<String, AttributeValue> readConsistently(String key, String operation) {
        try {
            return DynamoDbRequests.itemOf(client.getItem(requests.consistentRead(key)));
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate(operation, e, table());
        }
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        return conditionalUpdate(claim, requests.finish(claim, outcome, retention, result));
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        return conditionalUpdate(claim, requests.extend(claim, lease));
    }

    private boolean conditionalUpdate(Claim claim, DynamoDbRequests.OwnerUpdate update) {
        try {
            client.updateItem(update.request());
            return true;
        } catch (ConditionalCheckFailedException refused) {
            return DynamoDbRequests.retried(refused)
                    && update.appliedBefore(claim, readConsistently(claim.key(), update.operation()));
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate(update.operation(), e, table());
        }
    }

    @Override
    protected boolean doRelease(Claim claim) {
        try {
            client.deleteItem(requests.release(claim));
            return true;
        } catch (ConditionalCheckFailedException refused) {
            // A retried delete whose first attempt went through finds the item gone: the key is free, as asked.
            return DynamoDbRequests.retried(refused) && readConsistently(claim.key(), "release") == null;
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("release", e, table());
        }
    }

    /**
     * With an {@link Builder#asyncClient}, every settlement's conditional write at once (at most batchConcurrency in
     * flight), as the async view sends them ({@link DynamoDbAsyncBackend#settleAll}). Without one, one after another:
     * the sync client holds its thread for each request, and the store has no threads of its own to lend it.
     */
    @Override
    protected List<Boolean> doSettleAll(List<Settlement> settlements) {
        if (asyncBackend == null) {
            return super.doSettleAll(settlements);
        }
        try {
            return asyncBackend.settleAll(settlements).join();
        } catch (CompletionException e) {
            throw DynamoDbErrors.translate("settleAll", e, table());
        }
    }

    @Override
    protected KeyRecord doInspect(String key) {
        return requests.liveRecord(key, readConsistently(key, "inspect"));
    }

    @Override
    protected boolean doForget(String key) {
        try {
            return requests.forgot(client.deleteItem(requests.forget(key)));
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("forget", e, table());
        }
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    // For the async backend and the batch settlement.

    DynamoDbRequests requests() {
        return requests;
    }

    /** How long one claim may go on retrying a key that changes under it. */
    ContentionRetry claimRetry() {
        return ContentionRetry.within(claimDeadline);
    }

    int batchConcurrency() {
        return batchConcurrency;
    }

    /** A claim never retries a race longer than one call of the client may take; 2 s where that is unknown. */
    private static Duration callTimeoutOf(DynamoDbClient client) {
        try {
            return client.serviceClientConfiguration().overrideConfiguration().apiCallTimeout()
                    .orElse(DEFAULT_CLAIM_DEADLINE);
        } catch (UnsupportedOperationException e) {
            return DEFAULT_CLAIM_DEADLINE; // a hand-written client (a test double) without a configuration
        }
    }

    /** Settings for a {@link DynamoDbDedupStore}; each setter checks its value at once. */
    public static final class Builder {
        private final DynamoDbClient client;
        private final String table;
        private DynamoDbAsyncClient asyncClient;
        private String namespace = DedupLimits.DEFAULT_NAMESPACE;
        private Clock clock = Clock.systemUTC();
        private int batchConcurrency = 16;
        private Duration claimDeadline;
        private Duration timeout;
        private boolean validateTable = true;
        private Runnable onClose = () -> {};

        private Builder(DynamoDbClient client, String table) {
            this.client = Objects.requireNonNull(client, "client");
            this.table = DynamoDbDedupTables.checkTableName(table);
        }

        /**
         * The namespace every key lives in (default {@code default}): part of each item's partition key.
         *
         * @param namespace 1 to 64 characters of {@code A-Z a-z 0-9 . _ -}
         * @return this builder
         * @throws IllegalArgumentException if {@code namespace} does not match
         */
        public Builder namespace(String namespace) {
            this.namespace = DedupLimits.checkNamespace(namespace);
            return this;
        }

        /**
         * The async client behind the native {@link DynamoDbDedupStore#async()} view, and through which claimAll and
         * settleAll send their conditional writes concurrently. Without one, {@code async()} throws
         * {@link UnsupportedOperationException} (use {@link dev.dedup.AsyncDedupStore#onExecutor}), and claimAll and
         * settleAll send one write after another.
         *
         * @param asyncClient an async client for the same account and region; the store never closes it
         * @return this builder
         */
        public Builder asyncClient(DynamoDbAsyncClient asyncClient) {
            this.asyncClient = Objects.requireNonNull(asyncClient, "asyncClient");
            return this;
        }

        /**
         * Most conditional writes one claimAll or settleAll keeps in flight (default 16); used only with an
         * {@link #asyncClient}.
         *
         * @param batchConcurrency 1 to 256
         * @return this builder
         * @throws IllegalArgumentException if {@code batchConcurrency} is out of range
         */
        public Builder batchConcurrency(int batchConcurrency) {
            if (batchConcurrency < 1 || batchConcurrency > 256) {
                throw new IllegalArgumentException("batchConcurrency must be in [1, 256], but was " + batchConcurrency);
            }
            this.batchConcurrency = batchConcurrency;
            return this;
        }

        /**
         * How long one claim may keep retrying a key that changes under it (released or expired between its put and
         * its read, as happens on a hot key) before it fails with a retryable {@link DedupStoreException}. Default:
         * the sync client's {@code apiCallTimeout}, else 2 s.
         *
         * @param claimDeadline 1 ms to 5 min
         * @return this builder
         * @throws IllegalArgumentException if {@code claimDeadline} is out of range
         */
        public Builder claimDeadline(Duration claimDeadline) {
            Objects.requireNonNull(claimDeadline, "claimDeadline");
            if (claimDeadline.compareTo(Duration.ofMillis(1)) < 0
                    || claimDeadline.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("claimDeadline must be in [PT0.001S, PT5M], but was "
                        + claimDeadline);
            }
            this.claimDeadline = claimDeadline;
            return this;
        }

        /**
         * Bounds each request the store sends, whatever the client's own timeouts (default: the client's, which
         * for a client built without them means the SDK's retries with no overall limit). Applied per request as its
         * {@code apiCallTimeout}, retries included; also the default {@link #claimDeadline}.
         *
         * @param timeout 1 ms to 10 min
         * @return this builder
         * @throws IllegalArgumentException if {@code timeout} is out of range
         */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("timeout must be in [PT0.001S, PT10M], but was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * The clock that decides expiry (DynamoDB conditions have no server time); inject one to test expiry.
         *
         * @param clock the clock every lease and retention is counted on (default the system's UTC clock); every
         *     process sharing the table should agree with it within a small part of the shortest lease
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Whether {@link #build()} checks the table's key schema (default true; one DescribeTable).
         *
         * @param validateTable false to skip the check, for example where the role may not call DescribeTable
         * @return this builder
         */
        public Builder validateTable(boolean validateTable) {
            this.validateTable = validateTable;
            return this;
        }

        /** Runs when the store closes: the provider closes the clients it created. */
        Builder onClose(Runnable onClose) {
            this.onClose = onClose;
            return this;
        }

        /**
         * Builds the store, checking the table first unless told not to.
         *
         * @return the store; closing it leaves the clients open
         * @throws dev.dedup.DedupConfigurationException if the table is missing or has another key schema
         * @throws DedupStoreException if DynamoDB could not be reached
         */
        public DynamoDbDedupStore build() {
            if (validateTable) {
                DynamoDbDedupTables.validate(client, table, timeout);
            }
            return new DynamoDbDedupStore(this);
        }
    }
}
