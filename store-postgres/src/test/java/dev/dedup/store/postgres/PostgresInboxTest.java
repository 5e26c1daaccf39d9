package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The transactional inbox: the claim commits or rolls back with the business write, on the real server. */
class PostgresInboxTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofHours(1);

    private static HikariDataSource pool;
    private static PostgresDedupStore store;

    @BeforeAll
    static void createTables() throws SQLException {
        pool = PostgresTestSupport.pool(6);
        store = PostgresDedupStore.builder(pool).namespace("inbox-test").validateSchema(false).build();
        store.createSchema();
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS inbox_test_reservations (message_id text NOT NULL,"
                    + " sku text NOT NULL, quantity integer NOT NULL)");
        }
    }

    @AfterAll
    static void close() {
        pool.close();
    }

    private static String newMessageId() {
        return "msg-" + UUID.randomUUID();
    }

    @Test
    @DisplayName("a rolled-back transaction frees the key: the redelivery starts clean")
    void rollbackFreesTheKey() throws SQLException {
        String messageId = newMessageId();
        try (Connection transaction = begin()) {
            assertThat(store.inTransaction(transaction).claim(messageId, LEASE)).isInstanceOf(Claim.class);
            reserve(transaction, messageId, "sku-1", 2);
            transaction.rollback();
        }

        assertThat(store.claim(messageId, LEASE)).isInstanceOf(Claim.class);
        assertThat(reservations(messageId)).isZero();
    }

    @Test
    @DisplayName("a committed transaction leaves a completed record, with its result, kept for the retention")
    void commitLeavesACompletedRecord() throws SQLException {
        String messageId = newMessageId();
        Instant before = Instant.now();
        try (Connection transaction = begin()) {
            DedupStore inbox = store.inTransaction(transaction);
            Claim claim = (Claim) inbox.claim(messageId, LEASE);
            reserve(transaction, messageId, "sku-1", 2);
            assertThat(inbox.complete(claim, RETENTION, "reservation-7".getBytes())).isTrue();
            transaction.commit();
        }

        Duplicate duplicate = (Duplicate) store.claim(messageId, LEASE);
        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate.result()).hasValueSatisfying(bytes -> assertThat(new String(bytes)).isEqualTo("reservation-7"));
        assertThat(duplicate.expiresAt()).isAfter(before.plus(RETENTION).minusSeconds(1));
        assertThat(reservations(messageId)).isEqualTo(1);
    }

    @Test
    @DisplayName("a claim's fingerprint stored inside the transaction comes back to duplicates after the commit")
    void fingerprintCommitsWithTheClaim() throws SQLException {
        String messageId = newMessageId();
        byte[] fingerprint = "sha-of-order-7".getBytes();
        try (Connection transaction = begin()) {
            DedupStore inbox = store.inTransaction(transaction);
            Claim claim = (Claim) inbox.claim(messageId, LEASE, fingerprint);
            Duplicate again = (Duplicate) inbox.claim(messageId, LEASE, "other".getBytes());
            assertThat(again.fingerprint()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(fingerprint));
            reserve(transaction, messageId, "sku-1", 1);
            assertThat(inbox.complete(claim, RETENTION, null)).isTrue();
            transaction.commit();
        }

        Duplicate duplicate = (Duplicate) store.claim(messageId, LEASE);
        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate.fingerprint()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(fingerprint));
    }

    @Test
    @DisplayName("two concurrent deliveries in two transactions make exactly one business write")
    void concurrentDeliveriesWriteOnce() throws Exception {
        String messageId = newMessageId();
        CountDownLatch firstClaimed = new CountDownLatch(1);

        CompletableFuture<ClaimResult> first = CompletableFuture.supplyAsync(() -> deliver(messageId, () -> {
            firstClaimed.countDown();
            sleep(400); // hold the row lock while the second delivery arrives
        }));
        assertThat(firstClaimed.await(10, TimeUnit.SECONDS)).isTrue();
        long started = System.nanoTime();
        ClaimResult second = deliver(messageId, () -> {});
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        assertThat(first.get(10, TimeUnit.SECONDS)).isInstanceOf(Claim.class);
        assertThat(second).isInstanceOf(Duplicate.class);
        assertThat(((Duplicate) second).state()).isEqualTo(RecordState.COMPLETED);
        assertThat(waitedMillis).as("the second delivery waited for the first transaction").isGreaterThan(100);
        assertThat(reservations(messageId)).isEqualTo(1);
    }

    @Test
    @DisplayName("inside a long transaction, expiry counts from the statement, not from the transaction's start")
    void longTransactionsUseStatementTime() throws SQLException {
        try (Connection transaction = begin()) {
            try (Statement statement = transaction.createStatement()) {
                statement.execute("SELECT pg_sleep(1.2)");
            }
            Instant beforeClaim = Instant.now();
            Claim claim = (Claim) store.inTransaction(transaction).claim(newMessageId(), Duration.ofSeconds(2));
            transaction.commit();

            assertThat(claim.expiresAt()).isAfter(beforeClaim.plusMillis(1_900));
        }
    }

    @Test
    @DisplayName("under REPEATABLE READ a concurrent delivery fails with a retryable DedupStoreException, not SQLException")
    void repeatableReadFailsTyped() throws Exception {
        String messageId = newMessageId();
        try (Connection late = pool.getConnection()) {
            late.setAutoCommit(false);
            late.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try (Statement snapshot = late.createStatement()) {
                snapshot.execute("SELECT 1"); // takes the snapshot before the other delivery commits
            }
            assertThat(deliver(messageId, () -> {})).isInstanceOf(Claim.class);

            assertThatThrownBy(() -> store.inTransaction(late).claim(messageId, LEASE))
                    .isInstanceOf(DedupStoreException.class)
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue());
            late.rollback();
        }
        assertThat(reservations(messageId)).isEqualTo(1);
    }

    @Test
    @DisplayName("a step that outlasts the lease still completes: one business row after the redelivery, not two")
    void leaseLapseInsideTheTransactionDoesNotWriteTwice() throws SQLException {
        String messageId = newMessageId();
        Duration lease = Duration.ofMillis(500);
        try (Connection transaction = begin()) {
            DedupStore inbox = store.inTransaction(transaction);
            Claim claim = (Claim) inbox.claim(messageId, lease);
            reserve(transaction, messageId, "sku-1", 1);
            sleep(800); // a slow step (a lock wait, a slow query) past the lease
            assertThat(inbox.extend(claim, lease)).as("extend inside the claiming transaction").isTrue();
            assertThat(inbox.complete(claim, RETENTION, null)).as("complete inside the claiming transaction").isTrue();
            transaction.commit();
        }

        // The redelivery, the inbox way: a duplicate must roll back and write nothing.
        try (Connection transaction = begin()) {
            ClaimResult again = store.inTransaction(transaction).claim(messageId, lease);
            if (again instanceof Claim) {
                reserve(transaction, messageId, "sku-1", 1);
            }
            transaction.commit();
            assertThat(again).isInstanceOf(Duplicate.class);
            assertThat(((Duplicate) again).state()).isEqualTo(RecordState.COMPLETED);
        }
        assertThat(reservations(messageId)).as("business rows committed").isEqualTo(1);
    }

    @Test
    @DisplayName("release and fail inside the claiming transaction do not depend on the lease clock either")
    void releaseAndFailIgnoreTheLeaseClockInsideTheTransaction() throws SQLException {
        Duration lease = Duration.ofMillis(300);
        try (Connection transaction = begin()) {
            DedupStore inbox = store.inTransaction(transaction);
            Claim released = (Claim) inbox.claim(newMessageId(), lease);
            String failedId = newMessageId();
            Claim failed = (Claim) inbox.claim(failedId, lease);
            sleep(500);
            assertThat(inbox.release(released)).isTrue();
            assertThat(inbox.fail(failed, RETENTION, "declined".getBytes())).isTrue();
            transaction.commit();
            assertThat(((Duplicate) store.claim(failedId, LEASE)).state()).isEqualTo(RecordState.FAILED);
        }
    }

    @Test
    @DisplayName("inTransaction rejects a connection in auto-commit mode, which would commit the claim on its own")
    void rejectsAutoCommit() throws SQLException {
        try (Connection autoCommit = pool.getConnection()) {
            assertThat(autoCommit.getAutoCommit()).isTrue();
            assertThatThrownBy(() -> store.inTransaction(autoCommit))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("auto-commit");
        }
    }

    /** One delivery, the inbox way: claim, write, complete and commit together, or roll back on a duplicate. */
    private static ClaimResult deliver(String messageId, Runnable whileHolding) {
        try (Connection transaction = begin()) {
            DedupStore inbox = store.inTransaction(transaction);
            ClaimResult result = inbox.claim(messageId, LEASE);
            if (result instanceof Claim claim) {
                reserve(transaction, messageId, "sku-9", 1);
                whileHolding.run();
                if (!inbox.complete(claim, RETENTION, null)) {
                    transaction.rollback();
                    throw new IllegalStateException("the claim was lost before completing; rolled back");
                }
                transaction.commit();
            } else {
                transaction.rollback();
            }
            return result;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Connection begin() throws SQLException {
        Connection connection = pool.getConnection();
        connection.setAutoCommit(false);
        return connection;
    }

    private static void reserve(Connection transaction, String messageId, String sku, int quantity) throws SQLException {
        try (PreparedStatement insert = transaction.prepareStatement(
                "INSERT INTO inbox_test_reservations (message_id, sku, quantity) VALUES (?, ?, ?)")) {
            insert.setString(1, messageId);
            insert.setString(2, sku);
            insert.setInt(3, quantity);
            insert.executeUpdate();
        }
    }

    private static int reservations(String messageId) throws SQLException {
        try (Connection connection = pool.getConnection();
                PreparedStatement count = connection.prepareStatement(
                        "SELECT count(*) FROM inbox_test_reservations WHERE message_id = ?")) {
            count.setString(1, messageId);
            try (ResultSet row = count.executeQuery()) {
                row.next();
                return row.getInt(1);
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
