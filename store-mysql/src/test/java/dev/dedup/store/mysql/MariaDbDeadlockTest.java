package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A real InnoDB deadlock between a pooled claimAll and an inbox transaction: the pooled call is the victim (InnoDB
 * rolls back the smaller transaction, and the inbox one has written 100 rows), and the store runs it again instead
 * of failing; it then claims both keys once the inbox transaction rolls back.
 */
class MariaDbDeadlockTest {
    private static HikariDataSource pool;
    private static MysqlDedupStore store;

    @BeforeAll
    static void createTables() throws SQLException {
        pool = MariaDbTestSupport.pool("TRANSACTION_REPEATABLE_READ", 3);
        store = MysqlDedupStore.builder(pool).namespace("deadlock-test").createSchema(true).build();
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS deadlock_test_rows (id VARCHAR(64) NOT NULL) ENGINE=InnoDB");
        }
    }

    @AfterAll
    static void close() {
        pool.close();
    }

    @Test
    @DisplayName("a pooled claimAll chosen as a deadlock's victim is run again and claims its keys")
    void deadlockVictimIsRunAgain() throws Exception {
        String first = "a-" + UUID.randomUUID();
        String second = "b-" + UUID.randomUUID(); // after first in byte order: the batch locks first, then second
        try (Connection transaction = pool.getConnection()) {
            transaction.setAutoCommit(false);
            try (PreparedStatement insert = transaction.prepareStatement(
                    "INSERT INTO deadlock_test_rows (id) VALUES (?)")) {
                for (int i = 0; i < 100; i++) { // a heavier transaction than the batch's, so InnoDB spares it
                    insert.setString(1, second + "-" + i);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            assertThat(store.inTransaction(transaction).claim(second, Duration.ofMinutes(1)))
                    .isInstanceOf(Claim.class);

            CompletableFuture<List<ClaimResult>> batch = CompletableFuture.supplyAsync(
                    () -> store.claimAll(List.of(first, second), Duration.ofMinutes(1)));
            Thread.sleep(300); // the batch has locked first and waits for second
            assertThat(batch).isNotDone();
            // Closes the cycle: InnoDB rolls the batch back, and the inbox transaction gets first.
            assertThat(store.inTransaction(transaction).claim(first, Duration.ofMinutes(1)))
                    .isInstanceOf(Claim.class);
            transaction.rollback();

            assertThat(batch.get(5, TimeUnit.SECONDS)).allSatisfy(result -> assertThat(result)
                    .isInstanceOf(Claim.class));
        }
    }

    @Test
    @DisplayName("a lock wait that leaves under a second of the timeout ends the call in time, with the server's error")
    void lockWaitsStayWithinTheTimeout() throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(MariaDbTestSupport.jdbcUrl());
        config.setMaximumPoolSize(1);
        config.setConnectionInitSql("SET SESSION innodb_lock_wait_timeout = 1");
        String key = "locked-" + UUID.randomUUID();
        try (HikariDataSource waiting = new HikariDataSource(config);
                MysqlDedupStore timed = MysqlDedupStore.builder(waiting).namespace("deadlock-test")
                        .timeout(Duration.ofMillis(1500)).build();
                Connection transaction = pool.getConnection()) {
            transaction.setAutoCommit(false);
            store.inTransaction(transaction).claim(key, Duration.ofMinutes(1)); // holds the row until the end

            long start = System.nanoTime();
            Throwable failure = catchThrowable(() -> timed.claim(key, Duration.ofMinutes(1)));
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            // One lock wait of 1 s, then half a second left: too little for another, so the wait's error ends it.
            assertThat(took).isLessThan(Duration.ofMillis(1500));
            assertThat(failure).isInstanceOf(DedupStoreException.class)
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                    .hasRootCauseInstanceOf(SQLException.class)
                    .rootCause().satisfies(root -> assertThat(((SQLException) root).getErrorCode())
                            .isEqualTo(MysqlErrors.LOCK_WAIT_TIMEOUT));
            transaction.rollback();
        }
    }
}
