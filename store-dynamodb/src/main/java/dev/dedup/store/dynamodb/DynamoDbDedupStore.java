package dev.dedup.store.dynamodb;

import static dev.dedup.store.dynamodb.DynamoDbItems.CLAIMABLE;
import static dev.dedup.store.dynamodb.DynamoDbItems.HELD_BY_OWNER;
import static dev.dedup.store.dynamodb.DynamoDbItems.n;
import static dev.dedup.store.dynamodb.DynamoDbItems.s;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import dev.dedup.spi.ContentionRetry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.function.Predicate;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

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
    private final String table;
    private final Clock clock;
    private final int batchConcurrency;
    private final Duration claimDeadline;
    private final Runnable onClose;
    private final DynamoDbAsyncBackend asyncBackend;

    private DynamoDbDedupStore(Builder builder) {
        super(builder.namespace);
        this.client = builder.client;
        this.table = builder.table;
        this.clock = builder.clock;
        this.batchConcurrency = builder.batchConcurrency;
        this.claimDeadline = builder.claimDeadline != null ? builder.claimDeadline : callTimeoutOf(builder.client);
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
        return table;
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
            Instant expiresAt = clock.instant().plus(lease);
            try {
                client.putItem(claimRequest(key, owner, expiresAt, fingerprint));
                return claimed(key, owner, expiresAt);
            } catch (ConditionalCheckFailedException taken) {
                Map<String, AttributeValue> item = refusedItem(taken);
                ClaimResult decided = decide(key, owner, item != null ? item : readConsistently(key, "claim"));
                if (decided != null) {
                    return decided;
                }
            } catch (RuntimeException e) {
                throw DynamoDbErrors.translate("claim", e, table);
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

    // What both paths share: the requests, and the readings of what comes back. The blocking calls send them on the
    // sync client, DynamoDbAsyncBackend on the async one.

    /** The conditional put of one claim attempt: written when the key is absent or expired. */
    PutItemRequest claimRequest(String key, String owner, Instant expiresAt, byte[] fingerprint) {
        return PutItemRequest.builder()
                .tableName(table)
                .item(DynamoDbItems.inProgress(partitionKey(key), owner, expiresAt, fingerprint))
                .conditionExpression(CLAIMABLE)
                .expressionAttributeNames(DynamoDbItems.CLAIMABLE_NAMES)
                .expressionAttributeValues(Map.of(":now", n(clock.millis())))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
    }

    /** The claim a written put made. */
    Claim claimed(String key, String owner, Instant expiresAt) {
        return new Claim(namespace(), key, owner, truncated(expiresAt));
    }

    /**
     * What a refused put found: the caller's own claim when the item carries this claim's owner token (an earlier
     * attempt of the same put was written, and its reply lost), a duplicate for anyone else's live item, and null
     * when the item is gone or has expired since the put was refused.
     */
    ClaimResult decide(String key, String owner, Map<String, AttributeValue> item) {
        if (item == null || item.isEmpty() || !DynamoDbItems.expiresAt(item).isAfter(clock.instant())) {
            return null;
        }
        if (owner.equals(DynamoDbItems.owner(item)) && DynamoDbItems.state(item) == RecordState.IN_PROGRESS) {
            return new Claim(namespace(), key, owner, DynamoDbItems.expiresAt(item));
        }
        return new Duplicate(key, DynamoDbItems.state(item), DynamoDbItems.expiresAt(item), DynamoDbItems.result(item),
                DynamoDbItems.fingerprint(item));
    }

    /** The item a refused write returned (ReturnValuesOnConditionCheckFailure), or null where the service gave none. */
    static Map<String, AttributeValue> refusedItem(ConditionalCheckFailedException refused) {
        return refused.hasItem() && !refused.item().isEmpty() ? refused.item() : null;
    }

    /** The store's clock, on which every lease and retention is counted. */
    Instant now() {
        return clock.instant();
    }

    /** How long one claim may go on retrying a key that changes under it. */
    ContentionRetry claimRetry() {
        return ContentionRetry.within(claimDeadline);
    }

    /** The item as it is now, or null; for the checks made after a refused write (outside its try). */
    private Map<String, AttributeValue> readConsistently(String key, String operation) {
        try {
            return itemOf(client.getItem(consistentRead(key)));
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate(operation, e, table);
        }
    }

    GetItemRequest consistentRead(String key) {
        return GetItemRequest.builder().tableName(table).key(DynamoDbItems.key(partitionKey(key)))
                .consistentRead(true).build();
    }

    static Map<String, AttributeValue> itemOf(GetItemResponse read) {
        return read.hasItem() ? read.item() : null;
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        return conditionalUpdate(claim, finishUpdate(claim, outcome, retention, result));
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        return conditionalUpdate(claim, extendUpdate(claim, lease));
    }

    /** Complete or fail: the state, the retention's expiry and the payload, on the owner's live item. */
    OwnerUpdate finishUpdate(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        Instant now = clock.instant();
        Instant expiresAt = now.plus(retention);
        Map<String, AttributeValue> values = renewValues(claim, now, expiresAt);
        values.put(":completed", s(outcome.name()));
        String operation = outcome == RecordState.FAILED ? "fail" : "complete";
        String update = "SET #state = :completed, #expires = :expires_at, #ttl = :ttl";
        Map<String, String> names = DynamoDbItems.RENEW_NAMES;
        if (result != null) {
            values.put(":result", DynamoDbItems.b(result));
            update += ", #result = :result";
            names = DynamoDbItems.COMPLETE_WITH_RESULT_NAMES;
        }
        return ownerUpdate(claim, update, names, values, operation,
                item -> DynamoDbItems.state(item) == outcome && sameExpiry(item, expiresAt));
    }

    /** Extend: a new expiry on the owner's live item. */
    OwnerUpdate extendUpdate(Claim claim, Duration lease) {
        Instant now = clock.instant();
        Instant expiresAt = now.plus(lease);
        return ownerUpdate(claim, "SET #expires = :expires_at, #ttl = :ttl", DynamoDbItems.RENEW_NAMES,
                renewValues(claim, now, expiresAt), "extend",
                item -> DynamoDbItems.state(item) == RecordState.IN_PROGRESS && sameExpiry(item, expiresAt));
    }

    @Override
    protected boolean doRelease(Claim claim) {
        try {
            client.deleteItem(releaseRequest(claim));
            return true;
        } catch (ConditionalCheckFailedException refused) {
            // A retried delete whose first attempt went through finds the item gone: the key is free, as asked.
            return retried(refused) && readConsistently(claim.key(), "release") == null;
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("release", e, table);
        }
    }

    DeleteItemRequest releaseRequest(Claim claim) {
        return DeleteItemRequest.builder()
                .tableName(table)
                .key(DynamoDbItems.key(partitionKey(claim.key())))
                .conditionExpression(HELD_BY_OWNER)
                .expressionAttributeNames(DynamoDbItems.HELD_BY_OWNER_NAMES)
                .expressionAttributeValues(ownerCheckValues(claim, clock.instant()))
                .build();
    }

    @Override
    protected KeyRecord doInspect(String key) {
        return liveRecord(key, readConsistently(key, "inspect"));
    }

    /** The record inspect reports for a read item, or null. */
    KeyRecord liveRecord(String key, Map<String, AttributeValue> item) {
        // TTL deletion runs late: an item past its expiry is absent, by the claim's rule and this store's clock.
        if (item == null || !DynamoDbItems.expiresAt(item).isAfter(clock.instant())) {
            return null;
        }
        return new KeyRecord(key, DynamoDbItems.state(item), DynamoDbItems.expiresAt(item), DynamoDbItems.owner(item),
                DynamoDbItems.fingerprint(item), DynamoDbItems.result(item));
    }

    @Override
    protected boolean doForget(String key) {
        try {
            return forgot(client.deleteItem(forgetRequest(key)));
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("forget", e, table);
        }
    }

    /**
     * Unconditional, so nothing can refuse it; the old item tells whether it was live. A delete the SDK resent
     * after a lost reply finds nothing and answers false for an item its first attempt removed.
     */
    DeleteItemRequest forgetRequest(String key) {
        return DeleteItemRequest.builder()
                .tableName(table)
                .key(DynamoDbItems.key(partitionKey(key)))
                .returnValues(ReturnValue.ALL_OLD)
                .build();
    }

    /** Whether forget's delete removed a live item. */
    boolean forgot(DeleteItemResponse deleted) {
        return deleted.hasAttributes() && !deleted.attributes().isEmpty()
                && DynamoDbItems.expiresAt(deleted.attributes()).isAfter(clock.instant());
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    /**
     * One owner-checked update, and how to tell, after a refusal, that an earlier attempt of it was applied: when
     * the condition fails on a retry of the call (the SDK resent it after a lost reply or a timeout), the call
     * succeeded iff the item still carries this claim's owner and exactly what this call wrote.
     */
    record OwnerUpdate(UpdateItemRequest request, String operation,
            Predicate<Map<String, AttributeValue>> appliedByThisCall) {

        /** The verdict on a refused update, from the item read after it. */
        boolean appliedBefore(Claim claim, Map<String, AttributeValue> item) {
            return item != null && claim.owner().equals(DynamoDbItems.owner(item)) && appliedByThisCall.test(item);
        }
    }

    private OwnerUpdate ownerUpdate(Claim claim, String update, Map<String, String> names,
            Map<String, AttributeValue> values, String operation,
            Predicate<Map<String, AttributeValue>> appliedByThisCall) {
        return new OwnerUpdate(UpdateItemRequest.builder()
                .tableName(table)
                .key(DynamoDbItems.key(partitionKey(claim.key())))
                .updateExpression(update)
                .conditionExpression(HELD_BY_OWNER)
                .expressionAttributeNames(names)
                .expressionAttributeValues(values)
                .build(), operation, appliedByThisCall);
    }

    private boolean conditionalUpdate(Claim claim, OwnerUpdate update) {
        try {
            client.updateItem(update.request());
            return true;
        } catch (ConditionalCheckFailedException refused) {
            return retried(refused) && update.appliedBefore(claim, readConsistently(claim.key(), update.operation()));
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate(update.operation(), e, table);
        }
    }

    /** True when the SDK sent the request more than once, so an earlier attempt may have been applied. */
    static boolean retried(ConditionalCheckFailedException refused) {
        return refused.numAttempts() != null && refused.numAttempts() > 1;
    }

    private String partitionKey(String key) {
        return DynamoDbItems.partitionKey(namespace(), key);
    }

    int batchConcurrency() {
        return batchConcurrency;
    }

    /** The base class's helpers, for the async backend. */
    static String freshOwner() {
        return newOwnerToken();
    }

    static Map<String, String> distinctOwners(List<String> keys) {
        return ownersOfDistinctKeys(keys);
    }

    static List<ClaimResult> ordered(List<String> keys, Map<String, ClaimResult> byDistinctKey) {
        return inInputOrder(keys, byDistinctKey);
    }

    private static boolean sameExpiry(Map<String, AttributeValue> item, Instant expiresAt) {
        return DynamoDbItems.expiresAt(item).toEpochMilli() == expiresAt.toEpochMilli();
    }

    private static Map<String, AttributeValue> ownerCheckValues(Claim claim, Instant now) {
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":owner", s(claim.owner()));
        values.put(":in_progress", s(RecordState.IN_PROGRESS.name()));
        values.put(":now", n(now.toEpochMilli()));
        return values;
    }

    /** The owner check's values plus the new expiry, in milliseconds and in TTL seconds. */
    private static Map<String, AttributeValue> renewValues(Claim claim, Instant now, Instant expiresAt) {
        Map<String, AttributeValue> values = ownerCheckValues(claim, now);
        values.put(":expires_at", n(expiresAt.toEpochMilli()));
        values.put(":ttl", n(DynamoDbItems.ttlSeconds(expiresAt)));
        return values;
    }

    /** The stored expiry has millisecond precision; report exactly what a duplicate will read back. */
    private static Instant truncated(Instant instant) {
        return Instant.ofEpochMilli(instant.toEpochMilli());
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
         * The async client behind the native {@link DynamoDbDedupStore#async()} view, and through which claimAll runs
         * its conditional puts concurrently. Without one, {@code async()} throws {@link UnsupportedOperationException}
         * (use {@link dev.dedup.AsyncDedupStore#onExecutor}) and claimAll claims in turn.
         *
         * @param asyncClient an async client for the same account and region; the store never closes it
         * @return this builder
         */
        public Builder asyncClient(DynamoDbAsyncClient asyncClient) {
            this.asyncClient = Objects.requireNonNull(asyncClient, "asyncClient");
            return this;
        }

        /**
         * Most conditional puts one claimAll keeps in flight (default 16); used only with an
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
                DynamoDbDedupTables.validate(client, table);
            }
            return new DynamoDbDedupStore(this);
        }
    }
}
