package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/** What an item holds (expiry units above all), how a duplicate is read back, and whose clock decides. */
class DynamoDbItemsOnDynaliteTest {
    private static DynamoDbClient client;

    @BeforeAll
    static void createTheTable() {
        client = DynamoDbTestSupport.client(Duration.ofSeconds(10));
        DynamoDbDedupTables.create(client, DynamoDbTestSupport.TABLE);
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    private static String namespace() {
        return "items-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static Map<String, AttributeValue> item(String namespace, String key) {
        return client.getItem(r -> r.tableName(DynamoDbTestSupport.TABLE).consistentRead(true)
                .key(Map.of("pk", AttributeValue.fromS(namespace + ":" + key)))).item();
    }

    @Test
    @DisplayName("expiry is stored twice: milliseconds for the claim, seconds for DynamoDB TTL (never mixed up)")
    void expiryUnits() {
        String namespace = namespace();
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .build();
        Instant before = Instant.now();

        Claim claim = (Claim) store.claim("order-1", Duration.ofMinutes(10));
        Map<String, AttributeValue> claimed = item(namespace, "order-1");
        store.complete(claim, Duration.ofHours(2), new byte[] {9});
        Map<String, AttributeValue> completed = item(namespace, "order-1");

        long expiresMs = Long.parseLong(claimed.get("expires_at_ms").n());
        long ttlSeconds = Long.parseLong(claimed.get("ttl_epoch_s").n());
        assertThat(expiresMs).isEqualTo(claim.expiresAt().toEpochMilli())
                .isBetween(before.plusSeconds(600).toEpochMilli(), Instant.now().plusSeconds(600).toEpochMilli());
        assertThat(ttlSeconds).as("TTL in epoch seconds, rounded up").isEqualTo((expiresMs + 999) / 1000)
                .isBetween(before.getEpochSecond() + 600, Instant.now().getEpochSecond() + 601)
                .isLessThan(100_000_000_000L);
        assertThat(claimed.get("owner").s()).isEqualTo(claim.owner());
        assertThat(claimed.get("record_state").s()).isEqualTo("IN_PROGRESS");

        assertThat(completed.get("record_state").s()).isEqualTo("COMPLETED");
        assertThat(Long.parseLong(completed.get("ttl_epoch_s").n()))
                .isBetween(before.getEpochSecond() + 7_200, Instant.now().getEpochSecond() + 7_201);
        assertThat(completed.get("result").b().asByteArray()).containsExactly(9);
    }

    @Test
    @DisplayName("a fingerprint is a binary attribute: kept by complete, replaced by a take-over's put, absent without")
    void fingerprintAttribute() throws InterruptedException {
        String namespace = namespace();
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .build();

        Claim claim = (Claim) store.claim("order-1", Duration.ofMillis(300), new byte[] {1, 2});
        assertThat(item(namespace, "order-1").get("fingerprint").b().asByteArray()).containsExactly(1, 2);
        assertThat(store.complete(claim, Duration.ofMillis(300), null)).isTrue();
        assertThat(item(namespace, "order-1").get("fingerprint").b().asByteArray()).containsExactly(1, 2);
        Thread.sleep(400);

        store.claim("order-1", Duration.ofMinutes(1));
        assertThat(item(namespace, "order-1")).doesNotContainKey("fingerprint");
    }

    @Test
    @DisplayName("where the service returns the old item on a failed condition, no second read is made")
    void duplicateFromTheFailedConditionItself() {
        String namespace = namespace();
        AtomicInteger reads = new AtomicInteger();
        // dynalite ignores ReturnValuesOnConditionCheckFailure; this wrapper adds the item to the exception the way
        // DynamoDB does, reading it from dynalite, so the store's one-round-trip path runs against real data.
        DynamoDbClient returningOldItems = new DynamoDbClient() {
            @Override
            public PutItemResponse putItem(PutItemRequest request) {
                try {
                    return client.putItem(request);
                } catch (ConditionalCheckFailedException e) {
                    Map<String, AttributeValue> old = client.getItem(r -> r.tableName(request.tableName())
                            .consistentRead(true).key(Map.of("pk", request.item().get("pk")))).item();
                    throw ConditionalCheckFailedException.builder().message(e.getMessage()).item(old).build();
                }
            }

            @Override
            public GetItemResponse getItem(GetItemRequest request) {
                reads.incrementAndGet();
                return client.getItem(request);
            }

            @Override
            public UpdateItemResponse updateItem(UpdateItemRequest request) {
                return client.updateItem(request);
            }

            @Override
            public DescribeTableResponse describeTable(DescribeTableRequest request) {
                return client.describeTable(request);
            }

            @Override
            public String serviceName() {
                return client.serviceName();
            }

            @Override
            public void close() {}
        };
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(returningOldItems, DynamoDbTestSupport.TABLE)
                .namespace(namespace).build();
        Claim claim = (Claim) store.claim("k", Duration.ofMinutes(1));
        store.complete(claim, Duration.ofMinutes(1), new byte[] {1, 2});

        Duplicate duplicate = (Duplicate) store.claim("k", Duration.ofMinutes(1));

        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate.result()).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(1, 2));
        assertThat(reads).as("GetItem calls by the store").hasValue(0);
    }

    @Test
    @DisplayName("the claiming store's clock decides expiry: a clock 10 minutes ahead takes over a 5-minute lease")
    void theClaimersClockDecides() {
        String namespace = namespace();
        DynamoDbDedupStore onTime = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .build();
        DynamoDbDedupStore ahead = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .clock(Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10))).build();

        Claim first = (Claim) onTime.claim("skewed", Duration.ofMinutes(5));
        Claim takenOver = (Claim) ahead.claim("skewed", Duration.ofMinutes(5));

        // Why the README asks for synchronised clocks and leases far longer than the skew.
        assertThat(takenOver.owner()).isNotEqualTo(first.owner());
        assertThat(onTime.complete(first, Duration.ofMinutes(5), null)).isFalse();
    }

    @Test
    @DisplayName("without an async client, claimAll claims in turn with the same results")
    void claimAllWithoutAsyncClient() {
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace())
                .build();
        store.claim("b", Duration.ofMinutes(1));

        var results = store.claimAll(List.of("a", "b", "a", "c"), Duration.ofMinutes(1));

        assertThat(results.get(0)).isInstanceOf(Claim.class);
        assertThat(((Duplicate) results.get(1)).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(results.get(2)).isInstanceOf(Duplicate.class);
        assertThat(results.get(3)).isInstanceOf(Claim.class);
    }
}
