package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import java.sql.Connection;
import java.sql.DriverManager;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "MODIFY `key` VARCHAR(255) NOT NULL, MODIFY `expires_us` DATETIME(6) NOT NULL"
                + " | column expires_us is datetime(6), expected bigint",
        "ENGINE=MyISAM | engine is MyISAM, expected InnoDB",
        "DROP PRIMARY KEY, ADD PRIMARY KEY (`key`, `namespace`)"
                + " | primary key is (key, namespace), expected (namespace, key)",
        "DROP PRIMARY KEY, ADD COLUMN `id` BIGINT AUTO_INCREMENT PRIMARY KEY, ADD UNIQUE KEY (`namespace`, `key`)"
                + " | column id is AUTO_INCREMENT",
    })
    @DisplayName("other column types, engine, primary key or an AUTO_INCREMENT column fail validation, naming each")
    void tableOfAnotherShapeIsAConfigurationError(String alteration, String expected) throws SQLException {
        String table = newTable();
        MysqlDedupStore store = MysqlDedupStore.builder(pool).table(table).createSchema(true).build();
        try {
            execute("ALTER TABLE `" + table + "` " + alteration);
            assertThatThrownBy(() -> MysqlDedupStore.builder(pool).table(table).build())
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining(expected)
                    .hasMessageContaining("It must be:");
        } finally {
            store.dropSchema();
        }
    }

    @Test
    @DisplayName("a purge event that exists but is disabled is reported by createSchema")
    void disabledEventIsReported() throws SQLException {
        String table = newTable();
        MysqlDedupStore store = MysqlDedupStore.builder(pool).table(table).createSchema(true).build();
        try {
            execute("ALTER EVENT `" + table + "_purge_event` DISABLE");
            assertThat(store.createSchema().eventProblem()).get().asString()
                    .contains("the purge event " + table + "_purge_event is DISABLED")
                    .contains("ALTER EVENT `" + table + "_purge_event` ENABLE");
            store.validateSchema(); // logs the same warning, and passes: the table is right
        } finally {
            store.dropSchema();
        }
    }

    @Test
    @DisplayName("createSchema while another connection holds the schema lock fails in time, retryable, naming it")
    void heldSchemaLockFailsInTime() throws SQLException {
        String table = newTable();
        MysqlDedupStore store = MysqlDedupStore.builder(pool).table(table).validateSchema(false)
                .timeout(Duration.ofSeconds(2)).build();
        try (Connection holder = DriverManager.getConnection(MariaDbTestSupport.jdbcUrl());
                Statement statement = holder.createStatement()) {
            statement.execute("SELECT GET_LOCK(CONCAT('dedup-schema:', LEFT(SHA1('dedup-schema:" + table + "'), 40)),"
                    + " 0)");
            assertThatThrownBy(store::createSchema).isInstanceOf(DedupStoreException.class)
                    .hasMessageContaining("waited 1 s for the lock")
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue());
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
            MysqlSchema.create(connection, parsed, "1 SECOND", 5);
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
