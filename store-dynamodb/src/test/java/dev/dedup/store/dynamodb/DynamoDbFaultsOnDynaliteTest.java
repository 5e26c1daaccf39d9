package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.tck.ClaimChurn;
import dev.dedup.tck.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Lost replies, failed batches and hot-key churn, on the dynalite emulator: faults come from the kit's fault proxy
 * (a real cut connection) or, where one request must be hit, from {@link ReplyLosingDynamoDbClient}.
 */
class DynamoDbFaultsOnDynaliteTest {
    private static final Duration LEASE = Duration.ofMinutes(1);
    private static final Duration ATTEMPT = Duration.ofMillis(400);
    private static final Duration CALL = Duration.ofSeconds(1);

    private static DynamoDbClient direct;
    private static DynamoDbAsyncClient directAsync;

    private final List<AutoCloseable> opened = new ArrayList<>();
    private String namespace;
    private DynamoDbDedupStore witness;

    @BeforeAll
    static void createTheTable() {
        direct = DynamoDbTestSupport.client(Duration.ofSeconds(10));
        directAsync = DynamoDbTestSupport.asyncClient();
        DynamoDbDedupTables.create(direct, DynamoDbTestSupport.TABLE);
    }

    @AfterAll
    static void closeClients() {
        direct.close();
        directAsync.close();
    }

    @BeforeEach
    void newNamespace() {
        namespace = "faults-" + UUID.randomUUID().toString().substring(0, 8);
        witness = DynamoDbDedupStore.builder(direct, DynamoDbTestSupport.TABLE).namespace(namespace).build();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    private <T extends AutoCloseable> T track(T closeable) {
        opened.add(closeable);
        return closeable;
    }

    private FaultProxy proxy() {
        var address = DynamoDbTestSupport.address();
        return track(FaultProxy.start(address.getHostString(), address.getPort()));
    }

    private static String endpoint(FaultProxy proxy) {
        return "http://" + proxy.host() + ":" + proxy.port();
    }

    @Test
    @DisplayName("a fail whose reply is lost (the SDK resends it) reports true, and the record is FAILED")
    void lostFailReplyStillFails() {
        FaultProxy proxy = proxy();
        DynamoDbClient client = track(DynamoDbTestSupport.client(endpoint(proxy), ATTEMPT, CALL, 3));
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE)
                .namespace(namespace).build();
        Claim claim = (Claim) store.claim("declined", LEASE);
        proxy.loseNextReply();

        boolean failed = store.fail(claim, LEASE, new byte[] {4, 0, 2});

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(failed).as("fail after a lost reply, by the record's own owner").isTrue();
        Duplicate after = (Duplicate) witness.claim("declined", LEASE);
        assertThat(after.state()).isEqualTo(RecordState.FAILED);
        assertThat(store.fail(claim, LEASE, null)).as("a second, separate fail call").isFalse();
    }

    @Test
    @DisplayName("a retried complete never claims someone else's record: a stale owner still gets false")
    void retriedCompleteLeavesOthersAlone() {
        FaultProxy proxy = proxy();
        DynamoDbClient client = track(DynamoDbTestSupport.client(endpoint(proxy), ATTEMPT, CALL, 3));
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE)
                .namespace(namespace).build();
        Claim mine = (Claim) store.claim("taken", Duration.ofMillis(300));
        sleep(400);
        Claim theirs = (Claim) witness.claim("taken", LEASE);
        witness.complete(theirs, LEASE, new byte[] {7});
        proxy.loseNextReply();

        boolean completed = store.complete(mine, LEASE, new byte[] {1});

        assertThat(completed).isFalse();
        Duplicate after = (Duplicate) witness.claim("taken", LEASE);
        assertThat(after.result()).hasValueSatisfying(result -> assertThat(result).containsExactly(7));
    }

    @Test
    @DisplayName("claimAll on the async client that fails mid-batch (a lost reply, no retries) releases every key")
    void failedConcurrentClaimAllReleasesWhatItWon() {
        FaultProxy proxy = proxy();
        DynamoDbClient client = track(DynamoDbTestSupport.client(endpoint(proxy), ATTEMPT, CALL, 3));
        DynamoDbAsyncClient asyncClient = track(DynamoDbTestSupport.asyncClient(endpoint(proxy), ATTEMPT, CALL, 1));
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE)
                .namespace(namespace).asyncClient(asyncClient).batchConcurrency(4).build();
        List<String> keys = IntStream.range(0, 12).mapToObj(i -> "batch-" + i).toList();
        proxy.loseNextReply();

        assertThatThrownBy(() -> store.claimAll(keys, LEASE))
                .isInstanceOf(DedupStoreException.class)
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                .hasMessageContaining("claimAll failed on 1 of 12 keys")
                .hasMessageContaining("released the 11 claims it had won");

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(witness.claimAll(keys, LEASE)).as("every key, the one whose reply was lost included")
                .allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
    }

    @Test
    @DisplayName("claimAll key by key that fails on the third key releases the two it won and the one it wrote")
    void failedClaimAllInTurnReleasesWhatItWon() {
        ReplyLosingDynamoDbClient client = new ReplyLosingDynamoDbClient(direct);
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE)
                .namespace(namespace).build();
        client.loseReplyOfPut(3);

        assertThatThrownBy(() -> store.claimAll(List.of("a", "b", "c", "d"), LEASE))
                .isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("released the 2 claims it had won");

        assertThat(witness.claimAll(List.of("a", "b", "c", "d"), LEASE))
                .allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
    }

    @Test
    @DisplayName("when the releases fail too, the exception says how many keys stay held, with the causes attached")
    void unreleasableClaimsAreReported() {
        ReplyLosingDynamoDbClient client = new ReplyLosingDynamoDbClient(direct);
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE)
                .namespace(namespace).build();
        client.loseReplyOfPut(3);
        client.failDeletes(true);

        assertThatThrownBy(() -> store.claimAll(List.of("a", "b", "c", "d"), LEASE))
                .isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("except 3 it could not release")
                .satisfies(e -> assertThat(e.getSuppressed()).hasSize(3));
        assertThat(witness.claim("a", LEASE)).isInstanceOf(Duplicate.class);
        assertThat(witness.claim("d", LEASE)).as("never sent").isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("churn: 8 threads claiming and releasing 3 hot keys, one by one, never throw and never win twice")
    void churnOnHotKeysDecidesEveryClaim() throws Exception {
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(direct, DynamoDbTestSupport.TABLE)
                .namespace(namespace).build();

        ClaimChurn.Result result = ClaimChurn.run(store, 8, List.of("hot-1", "hot-2", "hot-3"), 150, false);

        System.out.println("dynalite churn, claim: " + result);
        assertThat(result.errors()).as("claims and releases that threw").isEmpty();
        assertThat(result.doubleWinners()).isZero();
        assertThat(result.won()).isPositive();
    }

    @Test
    @DisplayName("churn: the same through claimAll on the async client never throws and never wins twice")
    void churnThroughClaimAllDecidesEveryClaim() throws Exception {
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(direct, DynamoDbTestSupport.TABLE)
                .namespace(namespace).asyncClient(directAsync).build();

        ClaimChurn.Result result = ClaimChurn.run(store, 8, List.of("hot-1", "hot-2", "hot-3"), 150, true);

        System.out.println("dynalite churn, claimAll: " + result);
        assertThat(result.errors()).as("claims and releases that threw").isEmpty();
        assertThat(result.doubleWinners()).isZero();
    }

    @Test
    @DisplayName("a client without timeouts, replies held 20 s: the store's own timeout fails the claim, then it serves again")
    void theStoresTimeoutBoundsAClientWithoutTimeouts() {
        FaultProxy proxy = proxy();
        DynamoDbClient client = track(DynamoDbTestSupport.clientWithoutTimeouts(endpoint(proxy)));
        DynamoDbDedupStore store = DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE)
                .namespace(namespace).timeout(Duration.ofSeconds(1)).build();
        assertThat(store.claim("before", LEASE)).isInstanceOf(Claim.class);

        proxy.delayReplies(Duration.ofSeconds(20));
        long started = System.nanoTime();
        assertThatThrownBy(() -> store.claim("held", LEASE)).isInstanceOfSatisfying(DedupStoreException.class,
                e -> assertThat(e.isRetryable()).as("retryable").isTrue());
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        System.out.println("claim with replies held failed after " + took.toMillis() + " ms");
        assertThat(took).as("time to fail, with a 1 s store timeout").isLessThan(Duration.ofSeconds(6));

        proxy.heal();
        proxy.cutConnections();
        assertThat(store.claim("after", LEASE)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("a client without timeouts, replies held 20 s: the table check at build time fails within the store's timeout")
    void theStoresTimeoutBoundsTheTableCheck() {
        FaultProxy proxy = proxy();
        DynamoDbClient client = track(DynamoDbTestSupport.clientWithoutTimeouts(endpoint(proxy)));

        proxy.delayReplies(Duration.ofSeconds(20));
        long started = System.nanoTime();
        assertThatThrownBy(() -> DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .timeout(Duration.ofSeconds(1)).build())
                .isInstanceOfSatisfying(DedupStoreException.class,
                        e -> assertThat(e.isRetryable()).as("retryable").isTrue());
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        System.out.println("table check with replies held failed after " + took.toMillis() + " ms");
        assertThat(took).as("time to fail, with a 1 s store timeout").isLessThan(Duration.ofSeconds(6));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
