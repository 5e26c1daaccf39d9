package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Creating, checking and dropping the schema, and the purge, on the real MariaDB. */
class MariaDbSchemaTest {
    private static HikariDataSource pool;

    @BeforeAll
    static void openThePool() {
        pool = MariaDbTestSupport.pool("TRANSACTION_REPEATABLE_READ", 3);
    }

    @AfterAll
    static void closeThePool() {
        pool.close();
    }

    private static String newTable() {
        return "dedup_schema_" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @DisplayName("createSchema makes table, purge procedure and event, idempotently; dropSchema removes them")
    void createsAndDropsTheSchema() throws SQLException {
        String table = newTable();
        MysqlDedupStore store = MysqlDedupStore.builder(pool).table(table).validateSchema(false).build();
        MysqlSchemaReport report = store.createSchema();
        assertThat(store.createSchema()).isEqualTo(report);

        assertThat(report.eventCreated()).isTrue();
        assertThat(report.eventName()).isEqualTo(table + "_purge_event");
        assertThat(report.purgeCommand()).isEqualTo("CALL `" + table + "_purge`(5000, 100)");
        assertThat(count("SELECT COUNT(*) FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()"
                + " AND EVENT_NAME = '" + table + "_purge_event' AND STATUS = 'ENABLED'")).isOne();
        if ("ON".equals(single("SELECT @@GLOBAL.event_scheduler"))) {
            assertThat(report.eventProblem()).isEmpty();
        } else {
            assertThat(report.eventProblem()).get().asString().contains("event scheduler is OFF")
                    .contains("SET GLOBAL event_scheduler = ON").contains("purgeExpired");
        }
        MysqlDedupStore.builder(pool).table(table).build().validateSchema();

        store.dropSchema();
        store.dropSchema();
        assertThat(count("SELECT COUNT(*) FROM information_schema.EVENTS WHERE EVENT_NAME = '" + table
                + "_purge_event'")).isZero();
        assertThat(count("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_NAME = '" + table
                + "_purge'")).isZero();
    }

    @Test
    @DisplayName("a missing table fails the build with the DDL to create it; so does the first call without validation")
    void missingTableIsAConfigurationError() {
        String table = newTable();
        assertThatThrownBy(() -> MysqlDedupStore.builder(pool).table(table).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining(table + " does not exist")
                .hasMessageContaining("createSchema()")
                .hasMessageContaining("CREATE TABLE IF NOT EXISTS `" + table + "`");
        MysqlDedupStore unchecked = MysqlDedupStore.builder(pool).table(table).validateSchema(false).build();
        assertThatThrownBy(() -> unchecked.claim("k", Duration.ofSeconds(5)))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("table " + table + " is missing")
                .hasMessageContaining("CREATE TABLE");
    }

    @Test
    @DisplayName("a table with a narrower key or another expiry type fails validation, naming each column")
    void alteredTableIsAConfigurationError() throws SQLException {
        String table = newTable();
        MysqlDedupStore store = MysqlDedupStore.builder(pool).table(table).createSchema(true).build();
        try {
            execute("ALTER TABLE `" + table + "` MODIFY `key` VARCHAR(255) NOT NULL,"
                    + " MODIFY `expires_us` DATETIME(6) NOT NULL");
            assertThatThrownBy(() -> MysqlDedupStore.builder(pool).table(table).build())
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("column key is varchar(255), expected varbinary(512)")
                    .hasMessageContaining("column expires_us is datetime(6), expected bigint")
                    .hasMessageContaining("It must be:");
        } finally {
            store.dropSchema();
        }
    }

    @Test
    @DisplayName("purgeExpired and the event's procedure delete expired rows in bounded batches, and only those")
    void purgeDeletesOnlyExpiredRows() throws Exception {
        String table = newTable();
        MysqlDedupStore store = MysqlDedupStore.builder(pool).table(table).createSchema(true).build();
        try {
            for (int i = 0; i < 5; i++) {
                assertThat(store.claim("expiring-" + i, Duration.ofMillis(1))).isInstanceOf(Claim.class);
            }
            Claim live = (Claim) store.claim("live", Duration.ofMinutes(5));
            Thread.sleep(20);

            assertThat(store.purgeExpired(2)).isEqualTo(2);
            assertThat(count("SELECT COUNT(*) FROM `" + table + "`")).isEqualTo(4);
            execute("CALL `" + table + "_purge`(2, 100)"); // what the event runs, in batches of 2 until done
            assertThat(count("SELECT COUNT(*) FROM `" + table + "`")).isOne();
            assertThat(store.purgeExpired(100)).isZero();
            assertThat(store.complete(live, Duration.ofMinutes(5), null)).isTrue();
            assertThatThrownBy(() -> store.purgeExpired(0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("[1, 100000]");
        } finally {
            store.dropSchema();
        }
    }

    @Test
    @DisplayName("with the event scheduler on, the event purges expired rows by itself (every second here)")
    void theEventPurgesOnItsOwn() throws Exception {
        Assumptions.assumeTrue("ON".equals(single("SELECT @@GLOBAL.event_scheduler")),
                "the server's event scheduler is off: the event's body is tested by purgeDeletesOnlyExpiredRows");
        String table = newTable();
        MysqlTable parsed = MysqlTable.parse(table);
        try (Connection connection = pool.getConnection()) {
            MysqlSchema.create(connection, parsed, "1 SECOND");
        }
        MysqlDedupStore store = MysqlDedupStore.builder(pool).table(table).build();
        try {
            store.claim("expiring", Duration.ofMillis(1));
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (count("SELECT COUNT(*) FROM `" + table + "`") > 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(count("SELECT COUNT(*) FROM `" + table + "`")).isZero();
        } finally {
            store.dropSchema();
        }
    }

    private static void execute(String sql) throws SQLException {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static long count(String sql) throws SQLException {
        return Long.parseLong(single(sql));
    }

    private static String single(String sql) throws SQLException {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery(sql)) {
            row.next();
            return row.getString(1);
        }
    }
}
