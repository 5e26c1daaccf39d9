package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.tck.ClaimChurn;
import dev.dedup.tck.FaultProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Lost replies and hot-key churn on mongo-java-server 1.47.0 in-process (no real mongod can run here). The test
 * server has no sessions, so the driver retries no write after a lost reply: these tests show that the store's own
 * retry recognises what its first try did, strictly (the kit's contract also accepts an error). The timeout is 3 s:
 * after a broken connection the driver takes about 1 s to find the server again before the retry can run.
 */
class MongoFaultsOnMongoJavaServerTest {
    private static final String DATABASE = "dedup_lost_replies";
    static final Duration TIMEOUT = Duration.ofSeconds(3);
    private static final Duration LEASE = Duration.ofMinutes(1);

    private static MongoTestServer server;
    private static MongoClient directClient;

    private FaultProxy proxy;
    private MongoClient proxiedClient;
    private DedupStore store;
    private MongoDedupStore witness;

    @BeforeAll
    static void startServer() {
        server = MongoTestServer.startInProcess();
        directClient = MongoFaultClients.client(server.address().getHostString(), server.address().getPort(),
                Duration.ofSeconds(5));
        MongoDedupStore.builder(directClient, DATABASE).validateIndexes(false).build().createIndexes();
    }

    @AfterAll
    static void stopServer() {
        directClient.close();
        server.close();
    }

    @BeforeEach
    void openStores() {
        String namespace = "lost-" + UUID.randomUUID().toString().substring(0, 8);
        proxy = FaultProxy.start(server.address().getHostString(), server.address().getPort());
        proxiedClient = MongoFaultClients.client(proxy.host(), proxy.port(), TIMEOUT);
        store = openStore(MongoDedupStore.builder(proxiedClient, DATABASE).namespace(namespace).timeout(TIMEOUT),
                proxy);
        witness = MongoDedupStore.builder(directClient, DATABASE).namespace(namespace).build();
    }

    /** The store under test, built on the proxied client; the async subclass makes its calls through async(). */
    protected DedupStore openStore(MongoDedupStore.Builder proxied, FaultProxy proxy) {
        return proxied.build();
    }

    @AfterEach
    void closeStores() {
        store.close();
        proxiedClient.close();
        proxy.close();
    }

    @Test
    @DisplayName("a claim whose reply is lost is the caller's own claim, not a duplicate and not an error")
    void lostClaimReplyIsTheCallersClaim() {
        proxy.loseNextReply();

        ClaimResult result = store.claim("order-1", LEASE);

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(result).isInstanceOf(Claim.class);
        assertThat(witness.claim("order-1", LEASE)).isInstanceOf(Duplicate.class);
        assertThat(store.complete((Claim) result, LEASE, null)).isTrue();
    }

    @Test
    @DisplayName("a claimAll whose reply is lost returns the caller's own claims for every key")
    void lostClaimAllReplyIsTheCallersClaims() {
        List<String> keys = IntStream.range(0, 5).mapToObj(i -> "batch-" + i).toList();
        proxy.loseNextReply();

        List<ClaimResult> results = store.claimAll(keys, LEASE);

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(results).allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
        assertThat(witness.claimAll(keys, LEASE)).allSatisfy(result -> assertThat(result).isInstanceOf(Duplicate.class));
    }

    @Test
    @DisplayName("complete and fail whose replies are lost report true; a second, separate call still reports false")
    void lostFinishRepliesStillFinish() {
        Claim completed = (Claim) store.claim("done", LEASE);
        Claim failed = (Claim) store.claim("declined", LEASE);

        proxy.loseNextReply();
        assertThat(store.complete(completed, LEASE, new byte[] {1})).isTrue();
        proxy.loseNextReply();
        assertThat(store.fail(failed, LEASE, new byte[] {2})).isTrue();

        assertThat(proxy.lostReplies()).isEqualTo(2);
        assertThat(((Duplicate) witness.claim("done", LEASE)).state()).isEqualTo(RecordState.COMPLETED);
        assertThat(((Duplicate) witness.claim("declined", LEASE)).state()).isEqualTo(RecordState.FAILED);
        assertThat(store.complete(completed, LEASE, new byte[] {1})).isFalse();
        assertThat(store.fail(failed, LEASE, null)).isFalse();
    }

    @Test
    @DisplayName("release and extend whose replies are lost report true, and did what they said")
    void lostReleaseAndExtendReplies() {
        Claim released = (Claim) store.claim("released", LEASE);
        Claim extended = (Claim) store.claim("extended", Duration.ofSeconds(30));

        proxy.loseNextReply();
        assertThat(store.release(released)).isTrue();
        proxy.loseNextReply();
        assertThat(store.extend(extended, Duration.ofMinutes(10))).isTrue();

        assertThat(proxy.lostReplies()).isEqualTo(2);
        assertThat(witness.claim("released", LEASE)).isInstanceOf(Claim.class);
        Duplicate stillHeld = (Duplicate) witness.claim("extended", LEASE);
        assertThat(stillHeld.expiresAt()).isAfter(extended.expiresAt().plus(Duration.ofMinutes(5)));
        assertThat(store.release(released)).as("a second, separate release").isFalse();
    }

    @Test
    @DisplayName("a settleAll whose bulk reply is lost answers each settlement as its first try applied it")
    void lostSettleAllReplyAnswersWhatTheFirstTryDid() {
        Claim completed = (Claim) store.claim("settled", LEASE);
        Claim released = (Claim) store.claim("let-go", LEASE);
        Claim forgotten = (Claim) store.claim("forgotten", LEASE);
        assertThat(witness.forget("forgotten")).isTrue();
        proxy.loseNextReply();

        List<Boolean> answers = store.settleAll(List.of(Settlement.complete(completed, LEASE, new byte[] {1}),
                Settlement.release(released), Settlement.fail(forgotten, LEASE, new byte[] {2})));

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(answers).containsExactly(true, true, false);
        assertThat(witness.inspect("settled").orElseThrow().result()).containsExactly(1);
        assertThat(witness.claim("let-go", LEASE)).isInstanceOf(Claim.class);
        assertThat(witness.inspect("forgotten")).isEmpty();
    }

    @Test
    @DisplayName("a retried complete never takes someone else's record: a stale owner still gets false")
    void retriedCompleteLeavesOthersAlone() throws InterruptedException {
        Claim mine = (Claim) store.claim("taken", Duration.ofMillis(200));
        Thread.sleep(300);
        Claim theirs = (Claim) witness.claim("taken", LEASE);
        witness.complete(theirs, LEASE, new byte[] {7});
        proxy.loseNextReply();

        assertThat(store.complete(mine, LEASE, new byte[] {1})).isFalse();
        assertThat(((Duplicate) witness.claim("taken", LEASE)).result())
                .hasValueSatisfying(result -> assertThat(result).containsExactly(7));
    }

    @Test
    @DisplayName("churn: 8 threads claiming and releasing 2 hot keys never throw and never win twice")
    void churnOnHotKeysDecidesEveryClaim() throws Exception {
        ClaimChurn.Result result = ClaimChurn.run(witness, 8, List.of("hot-1", "hot-2"), 1_500, false);

        System.out.println("mongo-java-server churn, claim: " + result);
        assertThat(result.errors()).as("claims and releases that threw").isEmpty();
        assertThat(result.doubleWinners()).isZero();
    }
}
