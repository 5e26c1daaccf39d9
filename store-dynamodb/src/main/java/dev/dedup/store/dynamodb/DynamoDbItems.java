package dev.dedup.store.dynamodb;

import dev.dedup.RecordState;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The item layout, and the expressions every operation uses. One item per key:
 *
 * <pre>
 * pk            S  namespace:key (the partition key; namespaces cannot contain ':')
 * owner         S  the claim's owner token
 * record_state  S  IN_PROGRESS, COMPLETED or FAILED
 * expires_at_ms N  expiry in epoch MILLISECONDS: what the claim's condition compares
 * ttl_epoch_s   N  the same expiry in epoch SECONDS: what DynamoDB's TTL deletion reads
 * result        B  the stored result, when there is one
 * fingerprint   B  the claim's payload fingerprint, when it has one (complete, fail and extend keep it)
 * </pre>
 *
 * Two expiry attributes on purpose: DynamoDB TTL wants seconds and deletes late (hours, even days), so it only
 * cleans up; the claim decides on milliseconds, itself.
 */
final class DynamoDbItems {
    static final String PK = "pk";
    static final String OWNER = "owner";
    static final String STATE = "record_state";
    static final String EXPIRES_AT_MS = "expires_at_ms";
    static final String TTL = "ttl_epoch_s";
    static final String RESULT = "result";
    static final String FINGERPRINT = "fingerprint";

    /** Absent, or expired by the caller's clock: the item can be claimed. */
    static final String CLAIMABLE = "attribute_not_exists(#pk) OR #expires <= :now";
    /** In progress, ours, and not expired: the only item complete, release and extend may touch. */
    static final String HELD_BY_OWNER = "#owner = :owner AND #state = :in_progress AND #expires > :now";

    // DynamoDB refuses names an expression does not use, so each expression has its own map, built once.
    static final Map<String, String> CLAIMABLE_NAMES = Map.of("#pk", PK, "#expires", EXPIRES_AT_MS);
    static final Map<String, String> HELD_BY_OWNER_NAMES = Map.of("#owner", OWNER, "#state", STATE,
            "#expires", EXPIRES_AT_MS);
    /** For an update that also sets the expiry pair (extend, complete without a result). */
    static final Map<String, String> RENEW_NAMES = Map.of("#owner", OWNER, "#state", STATE,
            "#expires", EXPIRES_AT_MS, "#ttl", TTL);
    /** For complete with a result. */
    static final Map<String, String> COMPLETE_WITH_RESULT_NAMES = Map.of("#owner", OWNER, "#state", STATE,
            "#expires", EXPIRES_AT_MS, "#ttl", TTL, "#result", RESULT);

    private DynamoDbItems() {}

    static String partitionKey(String namespace, String key) {
        return namespace + ":" + key;
    }

    static Map<String, AttributeValue> key(String partitionKey) {
        return Map.of(PK, s(partitionKey));
    }

    /** The whole item a claim puts: a take-over replaces every attribute, the fingerprint included. */
    static Map<String, AttributeValue> inProgress(String partitionKey, String owner, Instant expiresAt,
            byte[] fingerprint) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put(PK, s(partitionKey));
        item.put(OWNER, s(owner));
        item.put(STATE, s(RecordState.IN_PROGRESS.name()));
        item.put(EXPIRES_AT_MS, n(expiresAt.toEpochMilli()));
        item.put(TTL, n(ttlSeconds(expiresAt)));
        if (fingerprint != null) {
            item.put(FINGERPRINT, b(fingerprint));
        }
        return item;
    }

    /** Epoch seconds, rounded up so TTL never deletes an item before the claim considers it expired. */
    static long ttlSeconds(Instant expiresAt) {
        return Math.floorDiv(expiresAt.toEpochMilli() + 999, 1000);
    }

    static Instant expiresAt(Map<String, AttributeValue> item) {
        return Instant.ofEpochMilli(Long.parseLong(item.get(EXPIRES_AT_MS).n()));
    }

    static RecordState state(Map<String, AttributeValue> item) {
        return RecordState.valueOf(item.get(STATE).s());
    }

    static byte[] result(Map<String, AttributeValue> item) {
        AttributeValue result = item.get(RESULT);
        return result == null ? null : result.b().asByteArray();
    }

    static byte[] fingerprint(Map<String, AttributeValue> item) {
        AttributeValue fingerprint = item.get(FINGERPRINT);
        return fingerprint == null ? null : fingerprint.b().asByteArray();
    }

    static String owner(Map<String, AttributeValue> item) {
        return item.get(OWNER).s();
    }

    static AttributeValue s(String value) {
        return AttributeValue.fromS(value);
    }

    static AttributeValue n(long value) {
        return AttributeValue.fromN(Long.toString(value));
    }

    static AttributeValue b(byte[] value) {
        return AttributeValue.fromB(SdkBytes.fromByteArray(value));
    }
}
