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
import dev.dedup.RecordState;
import dev.dedup.spi.AbstractDedupStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
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
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * A {@link dev.dedup.spi.DedupStore} on DynamoDB, through the AWS SDK for Java v2.
 *
 * <p>A claim is one conditional {@code PutItem}: it writes the item when it is absent or expired
 * ({@code attribute_not_exists(pk) OR expires_at_ms <= :now}); {@code ConditionalCheckFailedException} means a live
 * item holds the key, which is a duplicate, never an error. The existing item comes back in the same call where
 * the service supports {@code ReturnValuesOnConditionCheckFailure}, else from one consistent {@code GetItem}.
 *
 * <p>DynamoDB conditions have no server clock, so "now" is this store's {@link Clock}: application servers must keep
 * their clocks within a small skew of each other (NTP), and leases must be much longer than that skew. TTL deletion
 * only cleans up; it can lag by days and never decides a claim.
 */
public final class DynamoDbDedupStore extends AbstractDedupStore {
    private static final int CLAIM_ATTEMPTS = 3;

    private final DynamoDbClient client;
    private final DynamoDbAsyncClient asyncClient;
    private final String table;
    private final Clock clock;
    private final int batchConcurrency;
    private final Runnable onClose;

    private DynamoDbDedupStore(Builder builder) {
        super(builder.namespace);
        this.client = builder.client;
        this.asyncClient = builder.asyncClient;
        this.table = builder.table;
        this.clock = builder.clock;
        this.batchConcurrency = builder.batchConcurrency;
        this.onClose = builder.onClose;
    }

    /** A store on the application's client and table (create it with {@link DynamoDbDedupTables#create}). */
    public static Builder builder(DynamoDbClient client, String table) {
        return new Builder(client, table);
    }

    public String table() {
        return table;
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease) {
        String partitionKey = DynamoDbItems.partitionKey(namespace(), key);
        for (int attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
            Instant now = clock.instant();
            Instant expiresAt = now.plus(lease);
            try {
                client.putItem(claimRequest(partitionKey, owner, now, expiresAt));
                return new Claim(namespace(), key, owner, truncated(expiresAt));
            } catch (ConditionalCheckFailedException taken) {
                Map<String, AttributeValue> existing = taken.hasItem() && !taken.item().isEmpty() ? taken.item()
                        : readConsistently(partitionKey);
                ClaimResult duplicate = duplicateOrNull(key, existing);
                if (duplicate != null) {
                    return duplicate;
                }
                // The item expired or vanished between the put and the read: try again.
            } catch (RuntimeException e) {
                throw DynamoDbErrors.translate("claim", e, table);
            }
        }
        throw racedTooOften();
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        if (asyncClient == null) {
            return super.doClaimAll(keys, lease);
        }
        // DynamoDB has no conditional batch write: the conditional puts run concurrently, at most
        // batchConcurrency in flight, through the async client.
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        Semaphore inFlight = new Semaphore(batchConcurrency);
        Map<String, CompletableFuture<ClaimResult>> pending = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, String> entry : ownerByKey.entrySet()) {
                inFlight.acquire();
                CompletableFuture<ClaimResult> claim = claimAsync(entry.getKey(), entry.getValue(), lease);
                claim.whenComplete((result, failure) -> inFlight.release());
                pending.put(entry.getKey(), claim);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DedupStoreException("DynamoDB dedup store claimAll interrupted", e, true);
        }
        Map<String, ClaimResult> byKey = new HashMap<>();
        pending.forEach((key, claim) -> {
            try {
                byKey.put(key, claim.join());
            } catch (CompletionException e) {
                throw DynamoDbErrors.translate("claimAll", e, table);
            }
        });
        return inInputOrder(keys, byKey);
    }

    private CompletableFuture<ClaimResult> claimAsync(String key, String owner, Duration lease) {
        String partitionKey = DynamoDbItems.partitionKey(namespace(), key);
        Instant now = clock.instant();
        Instant expiresAt = now.plus(lease);
        return asyncClient.putItem(claimRequest(partitionKey, owner, now, expiresAt))
                .<ClaimResult>thenApply(written -> new Claim(namespace(), key, owner, truncated(expiresAt)))
                .exceptionallyCompose(failure -> {
                    Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                    if (!(cause instanceof ConditionalCheckFailedException taken)) {
                        return CompletableFuture.failedFuture(cause);
                    }
                    CompletableFuture<Map<String, AttributeValue>> existing = taken.hasItem() && !taken.item().isEmpty()
                            ? CompletableFuture.completedFuture(taken.item())
                            : asyncClient.getItem(consistentRead(partitionKey))
                                    .thenApply(read -> read.hasItem() ? read.item() : null);
                    return existing.thenApply(item -> {
                        ClaimResult duplicate = duplicateOrNull(key, item);
                        // Rare: expired or deleted in between; settle it with the one-key claim.
                        return duplicate != null ? duplicate : doClaim(key, owner, lease);
                    });
                });
    }

    private PutItemRequest claimRequest(String partitionKey, String owner, Instant now, Instant expiresAt) {
        return PutItemRequest.builder()
                .tableName(table)
                .item(DynamoDbItems.inProgress(partitionKey, owner, expiresAt))
                .conditionExpression(CLAIMABLE)
                .expressionAttributeNames(DynamoDbItems.CLAIMABLE_NAMES)
                .expressionAttributeValues(Map.of(":now", n(now.toEpochMilli())))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
    }

    /** A duplicate for a live item; null when the item is gone or has expired since the put was refused. */
    private ClaimResult duplicateOrNull(String key, Map<String, AttributeValue> item) {
        if (item == null || item.isEmpty() || !DynamoDbItems.expiresAt(item).isAfter(clock.instant())) {
            return null;
        }
        return new Duplicate(key, DynamoDbItems.state(item), DynamoDbItems.expiresAt(item), DynamoDbItems.result(item));
    }

    private Map<String, AttributeValue> readConsistently(String partitionKey) {
        var read = client.getItem(consistentRead(partitionKey));
        return read.hasItem() ? read.item() : null;
    }

    private GetItemRequest consistentRead(String partitionKey) {
        return GetItemRequest.builder().tableName(table).key(DynamoDbItems.key(partitionKey)).consistentRead(true)
                .build();
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        Instant now = clock.instant();
        Map<String, AttributeValue> values = renewValues(claim, now, now.plus(retention));
        values.put(":completed", s(outcome.name()));
        String operation = outcome == RecordState.FAILED ? "fail" : "complete";
        if (result == null) {
            return conditionalUpdate(claim, "SET #state = :completed, #expires = :expires_at, #ttl = :ttl",
                    DynamoDbItems.RENEW_NAMES, values, operation);
        }
        values.put(":result", DynamoDbItems.b(result));
        return conditionalUpdate(claim,
                "SET #state = :completed, #expires = :expires_at, #ttl = :ttl, #result = :result",
                DynamoDbItems.COMPLETE_WITH_RESULT_NAMES, values, operation);
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        Instant now = clock.instant();
        return conditionalUpdate(claim, "SET #expires = :expires_at, #ttl = :ttl", DynamoDbItems.RENEW_NAMES,
                renewValues(claim, now, now.plus(lease)), "extend");
    }

    @Override
    protected boolean doRelease(Claim claim) {
        try {
            client.deleteItem(DeleteItemRequest.builder()
                    .tableName(table)
                    .key(DynamoDbItems.key(DynamoDbItems.partitionKey(namespace(), claim.key())))
                    .conditionExpression(HELD_BY_OWNER)
                    .expressionAttributeNames(DynamoDbItems.HELD_BY_OWNER_NAMES)
                    .expressionAttributeValues(ownerCheckValues(claim, clock.instant()))
                    .build());
            return true;
        } catch (ConditionalCheckFailedException notOurs) {
            return false;
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate("release", e, table);
        }
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    private boolean conditionalUpdate(Claim claim, String update, Map<String, String> names,
            Map<String, AttributeValue> values, String operation) {
        try {
            client.updateItem(UpdateItemRequest.builder()
                    .tableName(table)
                    .key(DynamoDbItems.key(DynamoDbItems.partitionKey(namespace(), claim.key())))
                    .updateExpression(update)
                    .conditionExpression(HELD_BY_OWNER)
                    .expressionAttributeNames(names)
                    .expressionAttributeValues(values)
                    .build());
            return true;
        } catch (ConditionalCheckFailedException notOurs) {
            return false;
        } catch (RuntimeException e) {
            throw DynamoDbErrors.translate(operation, e, table);
        }
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

    private DedupStoreException racedTooOften() {
        return new DedupStoreException("DynamoDB dedup store claim in namespace '" + namespace() + "' found the item"
                + " expiring or vanishing " + CLAIM_ATTEMPTS + " times in a row; retry", null, true);
    }

    /** Settings for a {@link DynamoDbDedupStore}; each setter checks its value at once. */
    public static final class Builder {
        private final DynamoDbClient client;
        private final String table;
        private DynamoDbAsyncClient asyncClient;
        private String namespace = DedupLimits.DEFAULT_NAMESPACE;
        private Clock clock = Clock.systemUTC();
        private int batchConcurrency = 16;
        private boolean validateTable = true;
        private Runnable onClose = () -> {};

        private Builder(DynamoDbClient client, String table) {
            this.client = Objects.requireNonNull(client, "client");
            this.table = DynamoDbDedupTables.checkTableName(table);
        }

        public Builder namespace(String namespace) {
            this.namespace = DedupLimits.checkNamespace(namespace);
            return this;
        }

        /** The async client claimAll uses to run its conditional puts concurrently; without one it claims in turn. */
        public Builder asyncClient(DynamoDbAsyncClient asyncClient) {
            this.asyncClient = Objects.requireNonNull(asyncClient, "asyncClient");
            return this;
        }

        /** Most conditional puts one claimAll keeps in flight (default 16). */
        public Builder batchConcurrency(int batchConcurrency) {
            if (batchConcurrency < 1 || batchConcurrency > 256) {
                throw new IllegalArgumentException("batchConcurrency must be in [1, 256], but was " + batchConcurrency);
            }
            this.batchConcurrency = batchConcurrency;
            return this;
        }

        /** The clock that decides expiry (DynamoDB conditions have no server time); inject one to test expiry. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Whether {@link #build()} checks the table's key schema (default true; one DescribeTable). */
        public Builder validateTable(boolean validateTable) {
            this.validateTable = validateTable;
            return this;
        }

        /** Runs when the store closes: the provider closes the clients it created. */
        Builder onClose(Runnable onClose) {
            this.onClose = onClose;
            return this;
        }

        public DynamoDbDedupStore build() {
            if (validateTable) {
                DynamoDbDedupTables.validate(client, table);
            }
            return new DynamoDbDedupStore(this);
        }
    }
}
