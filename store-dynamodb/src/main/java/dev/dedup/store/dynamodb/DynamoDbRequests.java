package dev.dedup.store.dynamodb;

import static dev.dedup.store.dynamodb.DynamoDbItems.CLAIMABLE;
import static dev.dedup.store.dynamodb.DynamoDbItems.HELD_BY_OWNER;
import static dev.dedup.store.dynamodb.DynamoDbItems.n;
import static dev.dedup.store.dynamodb.DynamoDbItems.s;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
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
 * The requests each operation sends, and the readings of what comes back, in one place for both paths: the
 * blocking calls send them on the sync client ({@link DynamoDbDedupStore}), the async view on the async client
 * ({@link DynamoDbAsyncBackend}). "Now" is always the store's {@link Clock}.
 */
final class DynamoDbRequests {
    private final String table;
    private final String namespace;
    private final Clock clock;
    /** Each request's bound when the store has a timeout of its own, else null: the client's settings apply. */
    private final AwsRequestOverrideConfiguration timeout;

    DynamoDbRequests(String table, String namespace, Clock clock, Duration timeout) {
        this.table = table;
        this.namespace = namespace;
        this.clock = clock;
        this.timeout = timeout == null ? null
                : AwsRequestOverrideConfiguration.builder().apiCallTimeout(timeout).build();
    }

    String table() {
        return table;
    }

    Instant now() {
        return clock.instant();
    }

    /** The conditional put of one claim attempt: written when the key is absent or expired. */
    PutItemRequest claim(String key, String owner, Instant expiresAt, byte[] fingerprint) {
        return PutItemRequest.builder()
                .overrideConfiguration(timeout)
                .tableName(table)
                .item(DynamoDbItems.inProgress(partitionKey(key), owner, expiresAt, fingerprint))
                .conditionExpression(CLAIMABLE)
                .expressionAttributeNames(DynamoDbItems.CLAIMABLE_NAMES)
                .expressionAttributeValues(Map.of(":now", n(clock.millis())))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
    }

    /** The claim a written put made; the stored expiry has millisecond precision, as a duplicate will read it. */
    Claim claimed(String key, String owner, Instant expiresAt) {
        return new Claim(namespace, key, owner, Instant.ofEpochMilli(expiresAt.toEpochMilli()));
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
            return new Claim(namespace, key, owner, DynamoDbItems.expiresAt(item));
        }
        return new Duplicate(key, DynamoDbItems.state(item), DynamoDbItems.expiresAt(item), DynamoDbItems.result(item),
                DynamoDbItems.fingerprint(item));
    }

    /** The item a refused write returned (ReturnValuesOnConditionCheckFailure), or null where the service gave none. */
    static Map<String, AttributeValue> refusedItem(ConditionalCheckFailedException refused) {
        return refused.hasItem() && !refused.item().isEmpty() ? refused.item() : null;
    }

    /** True when the SDK sent the request more than once, so an earlier attempt may have been applied. */
    static boolean retried(ConditionalCheckFailedException refused) {
        return refused.numAttempts() != null && refused.numAttempts() > 1;
    }

    GetItemRequest consistentRead(String key) {
        return GetItemRequest.builder().overrideConfiguration(timeout).tableName(table)
                .key(DynamoDbItems.key(partitionKey(key)))
                .consistentRead(true).build();
    }

    static Map<String, AttributeValue> itemOf(GetItemResponse read) {
        return read.hasItem() ? read.item() : null;
    }

    /** Complete or fail: the state, the retention's expiry and the payload, on the owner's live item. */
    OwnerUpdate finish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
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
    OwnerUpdate extend(Claim claim, Duration lease) {
        Instant now = clock.instant();
        Instant expiresAt = now.plus(lease);
        return ownerUpdate(claim, "SET #expires = :expires_at, #ttl = :ttl", DynamoDbItems.RENEW_NAMES,
                renewValues(claim, now, expiresAt), "extend",
                item -> DynamoDbItems.state(item) == RecordState.IN_PROGRESS && sameExpiry(item, expiresAt));
    }

    /**
     * One owner-checked update, and how to tell, after a refusal, that an earlier attempt of it was applied: when
     * the condition fails on a retry of the call (the SDK resent it after a lost reply or a timeout), the call
     * succeeded iff the item still carries this claim's owner and exactly what this call wrote.
     */
    record OwnerUpdate(UpdateItemRequest request, String operation,
            Predicate<Map<String, AttributeValue>> appliedByThisCall) {

        /** The verdict on an update refused on a resend, from the item read after it. */
        boolean appliedBefore(Claim claim, Map<String, AttributeValue> item) {
            return item != null && claim.owner().equals(DynamoDbItems.owner(item)) && appliedByThisCall.test(item);
        }
    }

    /** Release: deletes the owner's live item. A resend whose first attempt went through finds the item gone. */
    DeleteItemRequest release(Claim claim) {
        return DeleteItemRequest.builder()
                .overrideConfiguration(timeout)
                .tableName(table)
                .key(DynamoDbItems.key(partitionKey(claim.key())))
                .conditionExpression(HELD_BY_OWNER)
                .expressionAttributeNames(DynamoDbItems.HELD_BY_OWNER_NAMES)
                .expressionAttributeValues(ownerCheckValues(claim, clock.instant()))
                .build();
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

    /**
     * Forget: unconditional, so nothing can refuse it; the old item tells whether it was live. A delete the SDK
     * resent after a lost reply finds nothing and answers false for an item its first attempt removed.
     */
    DeleteItemRequest forget(String key) {
        return DeleteItemRequest.builder()
                .overrideConfiguration(timeout)
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

    private OwnerUpdate ownerUpdate(Claim claim, String update, Map<String, String> names,
            Map<String, AttributeValue> values, String operation,
            Predicate<Map<String, AttributeValue>> appliedByThisCall) {
        return new OwnerUpdate(UpdateItemRequest.builder()
                .overrideConfiguration(timeout)
                .tableName(table)
                .key(DynamoDbItems.key(partitionKey(claim.key())))
                .updateExpression(update)
                .conditionExpression(HELD_BY_OWNER)
                .expressionAttributeNames(names)
                .expressionAttributeValues(values)
                .build(), operation, appliedByThisCall);
    }

    private String partitionKey(String key) {
        return DynamoDbItems.partitionKey(namespace, key);
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
}
