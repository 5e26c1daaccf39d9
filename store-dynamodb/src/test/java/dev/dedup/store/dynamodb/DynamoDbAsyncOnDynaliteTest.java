package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.tck.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The native async view on the dynalite emulator, through the kit's fault proxy: it does not block its caller,
 * failures complete the stage with a typed exception, and lost replies and failed batches end as on the blocking
 * path.
 */
class DynamoDbAsyncOnDynaliteTest {
    private static final Duration LEASE = Duration.ofMinutes(1);
    private static final Duration ATTEMPT = Duration.ofMillis(400);
    private static final Duration CALL = Duration.ofSeconds(1);

    private static DynamoDbClient direct;

    private final List<AutoCloseable> opened = new ArrayList<>();
    private String namespace;
    private DynamoDbDedupStore witness;
    private FaultProxy proxy;

    @BeforeAll
    static void createTheTable() {
        direct = DynamoDbTestSupport.client(Duration.ofSeconds(10));
        DynamoDbDedupTables.create(direct, DynamoDbTestSupport.TABLE);
    }

    @AfterAll
    static void closeClient() {
        direct.close();
    }

    @BeforeEach
    void open() {
        namespace = "async-" + UUID.randomUUID().toString().substring(0, 8);
        witness = DynamoDbDedupStore.builder(direct, DynamoDbTestSupport.TABLE).namespace(namespace).build();
        var address = DynamoDbTestSupport.address();
        proxy = track(FaultProxy.start(address.getHostString(), address.getPort()));
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) { // the store before its clients, the proxy last
            opened.get(i).close();
        }
    }

    private <T extends AutoCloseable> T track(T closeable) {
        opened.add(closeable);
        return closeable;
    }

    /** A store whose clients both cross the proxy; {@code asyncAttempts} 1 means the async client never resends. */
    private AsyncDedupStore asyncViaProxy(Duration attempt, Duration call, int asyncAttempts) {
        String endpoint = "http://" + proxy.host() + ":" + proxy.port();
        DynamoDbClient client = track(DynamoDbTestSupport.client(endpoint, attempt, call, 3));
        DynamoDbAsyncClient asyncClient = track(DynamoDbTestSupport.asyncClient(endpoint, attempt, call,
                asyncAttempts));
        return track(DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .asyncClient(asyncClient).batchConcurrency(4).build()).async();
    }

    private static <T> T await(CompletionStage<T> stage) {
        return stage.toCompletableFuture().join();
    }

    @Test
    @DisplayName("one thread issues 64 claims while no reply can arrive; all 64 complete once replies pass")
    void issuesSixtyFourClaimsWithoutWaiting() {
        AsyncDedupStore async = asyncViaProxy(Duration.ofSeconds(30), Duration.ofSeconds(60), 1);
        await(async.claim("warm-up", LEASE)); // the client's first call loads its classes and opens a connection
        // Held far longer than issuing 64 calls takes: a call that waited for its reply could not have returned.
        proxy.delayReplies(Duration.ofSeconds(3));
        List<CompletableFuture<ClaimResult>> pending = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            pending.add(async.claim("k-" + i, LEASE).toCompletableFuture());
        }

        assertThat(pending).as("stages returned before any reply passed the proxy")
                .noneMatch(CompletableFuture::isDone);

        proxy.delayReplies(Duration.ZERO);
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
        assertThat(pending).allSatisfy(stage -> assertThat(stage.join()).isInstanceOf(Claim.class));
        assertThat(pending.stream().map(stage -> ((Claim) stage.join()).owner()).distinct()).hasSize(64);
    }

    @Test
    @DisplayName("with the connection refused, every call's stage fails with a retryable DedupStoreException")
    void refusedConnectionFailsTheStageTyped() {
        AsyncDedupStore async = asyncViaProxy(ATTEMPT, CALL, 3);
        Claim claim = (Claim) await(async.claim("held", LEASE));
        proxy.refuseConnections(true);
        proxy.cutConnections();

        List<Function<AsyncDedupStore, CompletionStage<?>>> calls = List.of(
                store -> store.claim("during", LEASE),
                store -> store.complete(claim, LEASE, new byte[] {1}),
                store -> store.fail(claim, LEASE, null),
                store -> store.extend(claim, LEASE),
                store -> store.release(claim),
                store -> store.claimAll(List.of("x", "y"), LEASE),
                store -> store.settleAll(List.of(Settlement.complete(claim, LEASE, null))),
                store -> store.inspect("held"),
                store -> store.forget("held"));
        for (Function<AsyncDedupStore, CompletionStage<?>> call : calls) {
            CompletableFuture<?> stage = call.apply(async).toCompletableFuture();
            assertThatThrownBy(stage::join).isInstanceOf(CompletionException.class)
                    .cause().isInstanceOf(DedupStoreException.class)
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                    .satisfies(e -> assertThat(e.getCause()).isNotNull());
        }

        proxy.refuseConnections(false);
        assertThat(witness.claim("held", LEASE)).as("nothing changed the held key").isInstanceOf(Duplicate.class);
    }

    @Test
    @DisplayName("a claim whose reply is lost (the SDK resends it) meets its own item: the caller's claim")
    void lostClaimReplyIsStillTheCallersClaim() {
        AsyncDedupStore async = asyncViaProxy(ATTEMPT, CALL, 3);
        await(async.claim("warm-up", LEASE));
        proxy.loseNextReply();

        ClaimResult result = await(async.claim("mine", LEASE));

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(result).isInstanceOf(Claim.class);
        assertThat(witness.inspect("mine")).hasValueSatisfying(
                record -> assertThat(record.owner()).isEqualTo(((Claim) result).owner()));
    }

    @Test
    @DisplayName("a fail whose reply is lost (the SDK resends it) reports true, and the record is FAILED")
    void lostFailReplyStillFails() {
        AsyncDedupStore async = asyncViaProxy(ATTEMPT, CALL, 3);
        Claim claim = (Claim) await(async.claim("declined", LEASE));
        proxy.loseNextReply();

        boolean failed = await(async.fail(claim, LEASE, new byte[] {4, 0, 2}));

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(failed).as("fail after a lost reply, by the record's own owner").isTrue();
        assertThat(((Duplicate) witness.claim("declined", LEASE)).state()).isEqualTo(RecordState.FAILED);
        assertThat(await(async.fail(claim, LEASE, null))).as("a second, separate fail call").isFalse();
    }

    @Test
    @DisplayName("a release whose reply is lost (the SDK resends it) reports true, and the key is free")
    void lostReleaseReplyStillReleases() {
        AsyncDedupStore async = asyncViaProxy(ATTEMPT, CALL, 3);
        Claim claim = (Claim) await(async.claim("given-back", LEASE));
        proxy.loseNextReply();

        assertThat(await(async.release(claim))).isTrue();
        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(witness.claim("given-back", LEASE)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("settleAll that fails mid-batch (a lost reply, no resends) still sends every write, then fails")
    void failedSettleAllSettlesTheRest() {
        AsyncDedupStore async = asyncViaProxy(ATTEMPT, CALL, 1);
        List<String> keys = IntStream.range(0, 12).mapToObj(i -> "settle-" + i).toList();
        List<Settlement> batch = await(async.claimAll(keys, LEASE)).stream()
                .map(claim -> Settlement.complete((Claim) claim, LEASE, new byte[] {9})).toList();
        proxy.loseNextReply();

        CompletableFuture<List<Boolean>> settled = async.settleAll(batch).toCompletableFuture();

        assertThatThrownBy(settled::join).isInstanceOf(CompletionException.class)
                .cause().isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("settleAll failed on 1 of 12 settlements")
                .hasMessageContaining("the 11 it settled stand")
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue());
        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(keys).as("every write reached the server, the one whose reply was lost included")
                .allSatisfy(key -> assertThat(witness.inspect(key).orElseThrow().state())
                        .isEqualTo(RecordState.COMPLETED));
    }

    @Test
    @DisplayName("claimAll that fails mid-batch (a lost reply, no resends) releases every key it won or wrote")
    void failedClaimAllReleasesWhatItWon() {
        AsyncDedupStore async = asyncViaProxy(ATTEMPT, CALL, 1);
        List<String> keys = IntStream.range(0, 12).mapToObj(i -> "batch-" + i).toList();
        await(async.claim("warm-up", LEASE));
        proxy.loseNextReply();

        CompletableFuture<List<ClaimResult>> batch = async.claimAll(keys, LEASE).toCompletableFuture();

        assertThatThrownBy(batch::join).isInstanceOf(CompletionException.class)
                .cause().isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("claimAll failed on 1 of 12 keys")
                .hasMessageContaining("claims it had won and any it may have written")
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue());
        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(witness.claimAll(keys, LEASE)).as("every key, the one whose reply was lost included")
                .allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
    }

    @Test
    @DisplayName("where the service returns the old item on a failed condition, the async claim reads nothing more")
    void duplicateFromTheFailedConditionItself() {
        DynamoDbAsyncClient dynalite = track(DynamoDbTestSupport.asyncClient());
        AtomicInteger reads = new AtomicInteger();
        // dynalite ignores ReturnValuesOnConditionCheckFailure; this wrapper adds the item to the exception the way
        // DynamoDB does, reading it from dynalite, so the one-round-trip path runs against real data.
        DynamoDbAsyncClient returningOldItems = new DynamoDbAsyncClient() {
            @Override
            public CompletableFuture<PutItemResponse> putItem(PutItemRequest request) {
                return dynalite.putItem(request).exceptionallyCompose(failure -> {
                    Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                    if (!(cause instanceof ConditionalCheckFailedException refused)) {
                        return CompletableFuture.failedFuture(cause);
                    }
                    return dynalite.getItem(r -> r.tableName(request.tableName()).consistentRead(true)
                                    .key(Map.of("pk", request.item().get("pk"))))
                            .<PutItemResponse>thenCompose(old -> CompletableFuture.failedFuture(
                                    ConditionalCheckFailedException.builder().message(refused.getMessage())
                                            .item(old.item()).build()));
                });
            }

            @Override
            public CompletableFuture<GetItemResponse> getItem(GetItemRequest request) {
                reads.incrementAndGet();
                return dynalite.getItem(request);
            }

            @Override
            public CompletableFuture<UpdateItemResponse> updateItem(UpdateItemRequest request) {
                return dynalite.updateItem(request);
            }

            @Override
            public String serviceName() {
                return dynalite.serviceName();
            }

            @Override
            public void close() {}
        };
        AsyncDedupStore async = track(DynamoDbDedupStore.builder(direct, DynamoDbTestSupport.TABLE)
                .namespace(namespace).asyncClient(returningOldItems).build()).async();
        Claim claim = (Claim) await(async.claim("k", LEASE));
        await(async.complete(claim, LEASE, new byte[] {1, 2}));

        Duplicate duplicate = (Duplicate) await(async.claim("k", LEASE));

        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate.result()).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(1, 2));
        assertThat(reads).as("GetItem calls by the store").hasValue(0);
    }

    @Test
    @DisplayName("opened by URI, the store's async() is native: the provider builds the async client too")
    void openedByUriIsNative() {
        try (DedupStore store = DedupStores.open(DynamoDbTestSupport.uri(DynamoDbTestSupport.TABLE, namespace))) {
            ClaimResult claim = await(store.async().claim("by-uri", LEASE));
            assertThat(claim).isInstanceOf(Claim.class);
            assertThat(await(store.async().complete((Claim) claim, LEASE, new byte[] {9}))).isTrue();
        }
        assertThat(witness.claim("by-uri", LEASE)).isInstanceOf(Duplicate.class);
    }

    @Test
    @DisplayName("without an async client, async() still points at AsyncDedupStore.onExecutor")
    void withoutAsyncClientThereIsNoNativeView() {
        assertThatThrownBy(witness::async).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("AsyncDedupStore.onExecutor");
    }
}
