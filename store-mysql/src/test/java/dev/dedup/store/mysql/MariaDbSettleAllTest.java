package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.Settlement;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * settleAll's answers when its batch does not simply run once: a statement that loses a lock wait and is run again,
 * and a driver that reports no row counts for a batch. Each answer must be its single call's.
 */
class MariaDbSettleAllTest {
    private static final Duration LONG = Duration.ofMinutes(1);

    @Test
    @DisplayName("a release that did nothing answers false, though another statement of its batch was run again")
    void rerunAfterLockWaitKeepsEachAnswer() throws Exception {
        try (HikariDataSource pool = pool(config -> config.setConnectionInitSql(
                        "SET SESSION innodb_lock_wait_timeout = 1"));
                MysqlDedupStore store = MysqlDedupStore.builder(pool).namespace("settle-rerun").createSchema(true)
                        .build();
                Connection locker = pool.getConnection()) {
            String prefix = UUID.randomUUID() + "-";
            Claim lapsed = (Claim) store.claim(prefix + "a", Duration.ofMillis(50));
            Claim held = (Claim) store.claim(prefix + "b", LONG);
            sleepPast(lapsed.expiresAt());
            assertThat(store.claim(lapsed.key(), LONG)).as("taken over by another owner").isInstanceOf(Claim.class);

            locker.setAutoCommit(false);
            try (PreparedStatement lock = locker.prepareStatement("SELECT `state` FROM `dedup_claims`"
                    + " WHERE `namespace` = ? AND `key` = ? FOR UPDATE")) {
                lock.setBytes(1, "settle-rerun".getBytes(StandardCharsets.UTF_8));
                lock.setBytes(2, held.key().getBytes(StandardCharsets.UTF_8));
                lock.executeQuery().close();
            }
            long waitsBefore = lockWaits(pool);
            CompletableFuture<List<Boolean>> settled = CompletableFuture.supplyAsync(() -> store.settleAll(List.of(
                    Settlement.release(lapsed), Settlement.release(held))));
            // The release of held waits for the lock, times out after 1 s and is run again: then the lock goes.
            awaitLockWaits(pool, waitsBefore + 2, settled);
            locker.rollback();

            assertThat(settled.get(5, TimeUnit.SECONDS)).containsExactly(false, true);
        }
    }

    @Test
    @DisplayName("with a driver that reports no batch row counts, a repeated complete answers false")
    void driverWithoutBatchCountsKeepsEachAnswer() {
        try (HikariDataSource pool = pool(config -> config.addDataSourceProperty("useBulkStmts", "true"));
                MysqlDedupStore store = MysqlDedupStore.builder(pool).namespace("settle-bulk").createSchema(true)
                        .build()) {
            String prefix = UUID.randomUUID() + "-";
            Claim done = (Claim) store.claim(prefix + "a", LONG);
            Claim open = (Claim) store.claim(prefix + "b", LONG);
            assertThat(store.complete(done, LONG, null)).isTrue();

            assertThat(store.settleAll(List.of(Settlement.complete(done, LONG, null),
                    Settlement.complete(open, LONG, null)))).containsExactly(false, true);
        }
    }

    private interface Settings {
        void apply(HikariConfig config);
    }

    private static HikariDataSource pool(Settings settings) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(MariaDbTestSupport.jdbcUrl());
        config.setMaximumPoolSize(3); // the store, the lock holder, the lock watcher
        settings.apply(config);
        return new HikariDataSource(config);
    }

    /** {@return the server's count of row lock waits so far} */
    private static long lockWaits(HikariDataSource pool) throws SQLException {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
                        + " WHERE VARIABLE_NAME = 'INNODB_ROW_LOCK_WAITS'")) {
            row.next();
            return row.getLong(1);
        }
    }

    /** Waits until the server counts {@code count} row lock waits, or {@code call} has ended. */
    private static void awaitLockWaits(HikariDataSource pool, long count, CompletableFuture<?> call)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (lockWaits(pool) < count && !call.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    private static void sleepPast(Instant instant) throws InterruptedException {
        Thread.sleep(Math.max(0, Duration.between(Instant.now(), instant).toMillis() + 20));
    }
}
