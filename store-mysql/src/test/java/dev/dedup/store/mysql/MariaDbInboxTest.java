package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The transactional inbox on the real MariaDB: the claim commits or rolls back with the business write. */
class MariaDbInboxTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofHours(1);

    private static HikariDataSource pool;
    private static MysqlDedupStore store;

    @BeforeAll
    static void createTables() throws SQLException {
        pool = MariaDbTestSupport.pool("TRANSACTION_REPEATABLE_READ", 4);
        store = MysqlDedupStore.builder(pool).namespace("inbox-test").createSchema(true).build();
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS inbox_test_reservations (message_id VARCHAR(64) NOT NULL,"
                    + " quantity INT NOT NULL) ENGINE=InnoDB");
        }
    }

    @AfterAll
    static void close() {
        pool.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"TRANSACTION_READ_COMMITTED", "TRANSACTION_REPEATABLE_READ"})
    @DisplayName("claim, business write and complete commit together; a rollback frees the key and leaves no write")
    void claimCommitsAndRollsBackWithTheBusinessWrite(String isolation) throws Exception {
        String rolledBack = "msg-" + UUID.randomUUID();
        try (Connection transaction = begin(isolation)) {
            assertThat(store.inTransaction(transaction).claim(rolledBack, LEASE)).isInstanceOf(Claim.class);
            reserve(transaction, rolledBack);
            transaction.rollback();
        }
        assertThat(reservations(rolledBack)).isZero();
        assertThat(store.inspect(rolledBack)).isEmpty();

        String committed = "msg-" + UUID.randomUUID();
        try (Connection transaction = begin(isolation)) {
            DedupStore inbox = store.inTransaction(transaction);
            Claim claim = (Claim) inbox.claim(committed, LEASE);
            reserve(transaction, committed);
            assertThat(inbox.complete(claim, RETENTION, "done".getBytes(StandardCharsets.UTF_8))).isTrue();
            transaction.commit();
        }
        assertThat(reservations(committed)).isOne();
        Duplicate duplicate = (Duplicate) store.claim(committed, LEASE);
        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(new String(duplicate.result().orElseThrow(), StandardCharsets.UTF_8)).isEqualTo("done");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"TRANSACTION_READ_COMMITTED", "TRANSACTION_REPEATABLE_READ"})
    @DisplayName("a second delivery waits for the open transaction, then sees the committed record as a duplicate")
    void concurrentDeliveryWaitsAndSeesTheDuplicate(String isolation) throws Exception {
        String messageId = "msg-" + UUID.randomUUID();
        try (Connection first = begin(isolation); Connection second = begin(isolation)) {
            // The second transaction's snapshot is older than the first's commit: its claim must still see the row.
            reservations(second, messageId);
            DedupStore inbox = store.inTransaction(first);
            Claim claim = (Claim) inbox.claim(messageId, LEASE);
            CompletableFuture<Object> redelivery = CompletableFuture.supplyAsync(
                    () -> store.inTransaction(second).claim(messageId, LEASE));
            Thread.sleep(200);
            assertThat(redelivery).isNotDone();
            inbox.complete(claim, RETENTION, null);
            first.commit();

            assertThat(redelivery.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(Duplicate.class,
                    duplicate -> assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED));
            second.rollback();
        }
    }

    @Test
    @DisplayName("inside the claiming transaction a lapsed lease still completes: nobody else could take the row")
    void completeIsIndependentOfTheLeaseClockInsideTheTransaction() throws Exception {
        String messageId = "msg-" + UUID.randomUUID();
        try (Connection transaction = begin("TRANSACTION_REPEATABLE_READ")) {
            DedupStore inbox = store.inTransaction(transaction);
            Claim claim = (Claim) inbox.claim(messageId, Duration.ofMillis(50));
            Thread.sleep(120);
            assertThat(inbox.complete(claim, RETENTION, null)).isTrue();
            transaction.commit();
        }
        assertThat(((Duplicate) store.claim(messageId, LEASE)).state()).isEqualTo(RecordState.COMPLETED);
    }

    @Test
    @DisplayName("a connection in auto-commit mode is refused, naming setAutoCommit(false)")
    void autoCommitIsRefused() throws SQLException {
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(true);
            assertThatThrownBy(() -> store.inTransaction(connection))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("setAutoCommit(false)");
        }
    }

    private static Connection begin(String isolation) throws SQLException {
        Connection connection = pool.getConnection();
        connection.setTransactionIsolation(isolation.equals("TRANSACTION_READ_COMMITTED")
                ? Connection.TRANSACTION_READ_COMMITTED : Connection.TRANSACTION_REPEATABLE_READ);
        connection.setAutoCommit(false);
        return connection;
    }

    private static void reserve(Connection transaction, String messageId) throws SQLException {
        try (PreparedStatement insert = transaction.prepareStatement(
                "INSERT INTO inbox_test_reservations (message_id, quantity) VALUES (?, 1)")) {
            insert.setString(1, messageId);
            insert.executeUpdate();
        }
    }

    private static int reservations(String messageId) throws SQLException {
        try (Connection connection = pool.getConnection()) {
            return reservations(connection, messageId);
        }
    }

    private static int reservations(Connection connection, String messageId) throws SQLException {
        try (PreparedStatement query = connection.prepareStatement(
                "SELECT COUNT(*) FROM inbox_test_reservations WHERE message_id = ?")) {
            query.setString(1, messageId);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getInt(1);
            }
        }
    }
}
