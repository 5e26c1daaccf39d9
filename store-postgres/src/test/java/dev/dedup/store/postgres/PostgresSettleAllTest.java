package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.tck.BlockingOverAsync;
import dev.dedup.tck.FaultProxy;
import java.net.URI;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@code settleAll} on the real PostgreSQL: one statement settles a mixed batch, each key by its own rule. */
class PostgresSettleAllTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofHours(1);

    private static HikariDataSource pool;
    private static PostgresDedupStore store;

    @BeforeAll
    static void createTheTable() {
        pool = PostgresTestSupport.pool(4);
        store = PostgresDedupStore.builder(pool).namespace("settle-" + UUID.randomUUID().toString().substring(0, 8))
                .validateSchema(false).build();
        store.createSchema();
    }

    @AfterAll
    static void closeThePool() {
        pool.close();
    }

    private static String newKey() {
        return "settle-" + UUID.randomUUID();
    }

    @Test
    @DisplayName("a mixed batch answers in input order, and each key ends as asked, with its own result")
    void mixedBatchEndsEachKeyAsAsked() {
        mixedBatchEndsEachKeyAsAsked(store, store);
    }

    @Test
    @DisplayName("the async view over an executor settles the same mixed batch the same way")
    void asyncViewSettlesTheMixedBatch() {
        ExecutorService executor = Executors.newFixedThreadPool(2);
        try {
            mixedBatchEndsEachKeyAsAsked(BlockingOverAsync.of(AsyncDedupStore.onExecutor(store, executor), store),
                    store);
        } finally {
            executor.shutdownNow();
        }
    }

    /** Completes with distinct results, fails, releases; then inspects every key through {@code witness}. */
    static void mixedBatchEndsEachKeyAsAsked(DedupStore settler, DedupStore witness) {
        List<String> keys = List.of(newKey(), newKey(), newKey(), newKey(), newKey());
        byte[] fingerprint = "order-7".getBytes();
        Claim withFingerprint = (Claim) settler.claim(keys.get(0), LEASE, fingerprint);
        List<Claim> claims = new ArrayList<>(List.of(withFingerprint));
        settler.claimAll(keys.subList(1, 5), LEASE).forEach(result -> claims.add((Claim) result));

        List<Boolean> answers = settler.settleAll(List.of(
                Settlement.complete(claims.get(0), RETENTION, "result-0".getBytes()),
                Settlement.fail(claims.get(1), RETENTION, "error-1".getBytes()),
                Settlement.release(claims.get(2)),
                Settlement.complete(claims.get(3), RETENTION, "result-3".getBytes()),
                Settlement.complete(claims.get(4), RETENTION, null)));

        assertThat(answers).containsExactly(true, true, true, true, true);
        KeyRecord first = witness.inspect(keys.get(0)).orElseThrow();
        assertThat(first.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(first.result()).isEqualTo("result-0".getBytes());
        assertThat(first.fingerprint()).as("the claim's fingerprint is kept").isEqualTo(fingerprint);
        KeyRecord failed = witness.inspect(keys.get(1)).orElseThrow();
        assertThat(failed.state()).isEqualTo(RecordState.FAILED);
        assertThat(failed.result()).isEqualTo("error-1".getBytes());
        assertThat(witness.inspect(keys.get(2))).as("the released key").isEmpty();
        KeyRecord fourth = witness.inspect(keys.get(3)).orElseThrow();
        assertThat(fourth.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(fourth.result()).isEqualTo("result-3".getBytes());
        KeyRecord fifth = witness.inspect(keys.get(4)).orElseThrow();
        assertThat(fifth.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(fifth.result()).isNull();
        assertThat(first.expiresAt()).isAfter(claims.get(0).expiresAt());
        assertThat(witness.claim(keys.get(2), LEASE)).as("a released key is claimable at once")
                .isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("a claim taken over after its lease lapsed answers false; the new owner's record is untouched")
    void lapsedClaimAnswersFalseAndLeavesTheNewOwnersRecord() throws InterruptedException {
        String lapsedKey = newKey();
        String releasedKey = newKey();
        String liveKey = newKey();
        Claim lapsed = (Claim) store.claim(lapsedKey, Duration.ofMillis(200));
        Claim lapsedRelease = (Claim) store.claim(releasedKey, Duration.ofMillis(200));
        Claim live = (Claim) store.claim(liveKey, LEASE);
        Thread.sleep(400);
        Claim newOwner = (Claim) store.claim(lapsedKey, LEASE);
        Claim newReleaseOwner = (Claim) store.claim(releasedKey, LEASE);

        List<Boolean> answers = store.settleAll(List.of(
                Settlement.complete(lapsed, RETENTION, "stale".getBytes()),
                Settlement.complete(live, RETENTION, "fresh".getBytes()),
                Settlement.release(lapsedRelease)));

        assertThat(answers).containsExactly(false, true, false);
        for (Claim holder : List.of(newOwner, newReleaseOwner)) {
            KeyRecord record = store.inspect(holder.key()).orElseThrow();
            assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
            assertThat(record.owner()).isEqualTo(holder.owner());
            assertThat(record.result()).isNull();
        }
        assertThat(store.inspect(liveKey).orElseThrow().result()).isEqualTo("fresh".getBytes());
    }

    @Test
    @DisplayName("inside the claiming transaction a batch settles whatever the lease clock says, and commits with it")
    void inTransactionSettlesIndependentOfTheLeaseClock() throws SQLException, InterruptedException {
        List<String> keys = List.of(newKey(), newKey(), newKey());
        try (Connection transaction = pool.getConnection()) {
            transaction.setAutoCommit(false);
            DedupStore inbox = store.inTransaction(transaction);
            List<Claim> claims = inbox.claimAll(keys, Duration.ofMillis(200)).stream().map(Claim.class::cast).toList();
            Thread.sleep(400); // a slow step past the lease
            assertThat(inbox.settleAll(List.of(Settlement.complete(claims.get(0), RETENTION, "a".getBytes()),
                    Settlement.fail(claims.get(1), RETENTION, "b".getBytes()), Settlement.release(claims.get(2)))))
                    .containsExactly(true, true, true);
            assertThat(store.inspect(keys.get(0))).as("not visible before the commit").isEmpty();
            transaction.commit();
        }

        assertThat(store.inspect(keys.get(0)).orElseThrow().result()).isEqualTo("a".getBytes());
        assertThat(store.inspect(keys.get(1)).orElseThrow().state()).isEqualTo(RecordState.FAILED);
        assertThat(store.inspect(keys.get(2))).isEmpty();
    }

    @Test
    @DisplayName("a rolled-back transaction undoes the whole batch: the claims stay as they were")
    void rollbackUndoesTheBatch() throws SQLException {
        List<Claim> claims = store.claimAll(List.of(newKey(), newKey()), LEASE).stream().map(Claim.class::cast)
                .toList();
        try (Connection transaction = pool.getConnection()) {
            transaction.setAutoCommit(false);
            assertThat(store.inTransaction(transaction).settleAll(List.of(
                    Settlement.complete(claims.get(0), RETENTION, null), Settlement.release(claims.get(1)))))
                    .containsExactly(true, true);
            transaction.rollback();
        }

        for (Claim claim : claims) {
            assertThat(store.inspect(claim.key()).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);
        }
    }

    @Test
    @DisplayName("a batch is one round trip: under a 300 ms delay on every reply, 40 settle in about one delay")
    void batchIsOneRoundTrip() {
        Duration delay = Duration.ofMillis(300);
        try (FaultProxy proxy = proxyToTheServer(); HikariDataSource viaProxy = poolVia(proxy)) {
            PostgresDedupStore slow = PostgresDedupStore.builder(viaProxy).namespace(store.namespace())
                    .validateSchema(false).build();
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 43; i++) {
                keys.add(newKey());
            }
            List<Claim> claims = store.claimAll(keys, LEASE).stream().map(Claim.class::cast).toList();
            slow.inspect(newKey()); // the pool's connection is open before the clock starts
            proxy.delayReplies(delay);

            long singles = System.nanoTime();
            for (Claim claim : claims.subList(40, 43)) {
                assertThat(slow.complete(claim, RETENTION, null)).isTrue();
            }
            Duration threeSingles = Duration.ofNanos(System.nanoTime() - singles);
            long batch = System.nanoTime();
            List<Boolean> answers = slow.settleAll(claims.subList(0, 40).stream()
                    .map(claim -> Settlement.complete(claim, RETENTION, null)).toList());
            Duration fortyInOne = Duration.ofNanos(System.nanoTime() - batch);

            assertThat(answers).hasSize(40).containsOnly(true);
            assertThat(threeSingles).as("three single completes: three delayed replies")
                    .isGreaterThanOrEqualTo(delay.multipliedBy(3));
            assertThat(fortyInOne).as("40 settlements in one batch: one delayed reply, not 40")
                    .isLessThan(delay.multipliedBy(3));
        }
    }

    @Test
    @DisplayName("a batch whose replies stop coming fails with a DedupStoreException within the timeout, no hang")
    void unansweredBatchFailsTyped() {
        try (FaultProxy proxy = proxyToTheServer(); HikariDataSource viaProxy = poolVia(proxy)) {
            PostgresDedupStore slow = PostgresDedupStore.builder(viaProxy).namespace(store.namespace())
                    .timeout(Duration.ofSeconds(1)).validateSchema(false).build();
            List<Claim> claims = store.claimAll(List.of(newKey(), newKey()), LEASE).stream()
                    .map(Claim.class::cast).toList();
            proxy.delayReplies(Duration.ofSeconds(10));

            long started = System.nanoTime();
            assertThatThrownBy(() -> slow.settleAll(List.of(Settlement.complete(claims.get(0), RETENTION, null),
                    Settlement.release(claims.get(1))))).isInstanceOf(DedupStoreException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            proxy.heal();
        }
    }

    @Test
    @DisplayName("a batch whose reply is lost answers each settlement by what the lost attempt did")
    void lostReplyAnswersWhatTheLostAttemptDid() {
        try (FaultProxy proxy = proxyToTheServer(); HikariDataSource viaProxy = poolVia(proxy)) {
            PostgresDedupStore faulty = PostgresDedupStore.builder(viaProxy).namespace(store.namespace())
                    .timeout(Duration.ofSeconds(2)).validateSchema(false).build();
            List<Claim> claims = store.claimAll(List.of(newKey(), newKey(), newKey()), LEASE).stream()
                    .map(Claim.class::cast).toList();
            faulty.inspect(newKey()); // the pool's connection is open: the next reply is the batch's
            proxy.loseNextReply();

            List<Boolean> answers = faulty.settleAll(List.of(
                    Settlement.complete(claims.get(0), RETENTION, "r".getBytes()),
                    Settlement.fail(claims.get(1), RETENTION, "e".getBytes()), Settlement.release(claims.get(2))));

            assertThat(proxy.lostReplies()).as("a reply was really lost").isEqualTo(1);
            assertThat(answers).containsExactly(true, true, true);
            assertThat(store.inspect(claims.get(0).key()).orElseThrow().result()).isEqualTo("r".getBytes());
            assertThat(store.inspect(claims.get(1).key()).orElseThrow().state()).isEqualTo(RecordState.FAILED);
            assertThat(store.inspect(claims.get(2).key())).isEmpty();
        }
    }

    private static FaultProxy proxyToTheServer() {
        URI jdbc = URI.create(PostgresTestSupport.jdbcUrl().substring("jdbc:".length()));
        return FaultProxy.start(jdbc.getHost(), jdbc.getPort());
    }

    private static HikariDataSource poolVia(FaultProxy proxy) {
        return PostgresTestSupport.pool("jdbc:postgresql://" + proxy.host() + ":" + proxy.port()
                + "/dedup?user=postgres", 1);
    }
}
