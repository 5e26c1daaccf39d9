package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mysql.cj.jdbc.MysqlDataSource;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import dev.dedup.jdbc.TableName;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The outbox table on the real PostgreSQL and MariaDB: append in the caller's transaction, schema, purge, metrics.
 */
class OutboxTest {
    private static final OutboxFixture fixture = new OutboxFixture(4);

    @AfterEach
    void dropOutboxes() {
        fixture.dropOutboxes();
    }

    @AfterAll
    static void disconnect() {
        fixture.close();
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("append in a committed transaction: one row with a UUID message id, with the business write")
    void committedAppendIsStored(TestDatabase database) throws SQLException {
        DataSource pool = fixture.pool(database);
        Outbox outbox = fixture.outbox(database);
        String messageId;
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            messageId = outbox.append(tx, "orders", "order-1", utf8("created"), Map.of("type", "OrderCreated"));
            assertThat(outbox.pendingCount()).as("invisible before the commit").isZero();
            tx.commit();
        }
        assertThat(UUID.fromString(messageId).toString()).isEqualTo(messageId);
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet row = statement.executeQuery("SELECT message_id, destination, " + database.key()
                        + ", payload, " + database.header("type") + ", published_at FROM " + outbox.table())) {
            assertThat(row.next()).isTrue();
            assertThat(row.getString(1)).isEqualTo(messageId);
            assertThat(row.getString(2)).isEqualTo("orders");
            assertThat(row.getString(3)).isEqualTo("order-1");
            assertThat(new String(row.getBytes(4), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("created");
            assertThat(row.getString(5)).isEqualTo("OrderCreated");
            assertThat(row.getTimestamp(6)).isNull();
            assertThat(row.next()).isFalse();
        }
        assertThat(outbox.pendingCount()).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("the publisher gets each event as appended: headers with quotes, backslashes, control characters and"
            + " non-ASCII text, binary payload, key, and its append time by the server's clock")
    void theRelayHandsEventsOverAsAppended(TestDatabase database) throws SQLException {
        DataSource pool = fixture.pool(database);
        Outbox outbox = fixture.outbox(database);
        Map<String, String> headers = Map.of("type", "Created", "quote\"d", "a \"b\" \\c\\", "lines", "x\ny\tz\u0001",
                "text", "Grüße, 東京 \uD83D\uDE00", "empty", "");
        byte[] payload = {0, (byte) 0xff, 10, 13, 39, 92};
        String messageId;
        Instant before = Instant.now().minusSeconds(5);
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            messageId = outbox.append(tx, "orders", "Key é", payload, headers);
            outbox.append(tx, "orders", null, utf8("no headers"), Map.of());
            tx.commit();
        }
        List<OutboxEvent> published = new ArrayList<>();
        assertThat(OutboxRelay.builder(outbox, published::addAll).build().relayOnce()).isEqualTo(2);
        OutboxEvent event = published.get(0);
        assertThat(event.messageId()).isEqualTo(messageId);
        assertThat(event.destination()).isEqualTo("orders");
        assertThat(event.key()).isEqualTo("Key é");
        assertThat(event.payload()).containsExactly(payload);
        assertThat(event.headers()).isEqualTo(headers);
        assertThat(event.createdAt()).isBetween(before, Instant.now().plusSeconds(5));
        assertThat(published.get(1).headers()).isEmpty();
        assertThat(published.get(1).key()).isNull();
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("append in a rolled-back transaction leaves no event")
    void rolledBackAppendLeavesNothing(TestDatabase database) throws SQLException {
        DataSource pool = fixture.pool(database);
        Outbox outbox = fixture.outbox(database);
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            outbox.append(tx, "orders", "order-1", utf8("created"), Map.of());
            assertThat(count(tx, outbox)).as("inside the transaction").isEqualTo(1);
            tx.rollback();
        }
        assertThat(outbox.pendingCount()).isZero();
        try (Connection db = pool.getConnection()) {
            assertThat(count(db, outbox)).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("append refuses an auto-commit connection, with the inbox's rule and message")
    void autoCommitIsRefused(TestDatabase database) throws SQLException {
        Outbox outbox = fixture.outbox(database);
        try (Connection autoCommit = fixture.pool(database).getConnection()) {
            assertThat(autoCommit.getAutoCommit()).isTrue();
            assertThatThrownBy(() -> outbox.append(autoCommit, "orders", null, utf8("x"), Map.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("Outbox.append needs a connection with auto-commit off (setAutoCommit(false)), so"
                            + " that the event commits or rolls back with your writes");
            assertThat(count(autoCommit, outbox)).isZero();
        }
    }

    @Test
    @DisplayName("bad arguments are refused, naming the value; message-id is the outbox's own header")
    void badArguments() throws SQLException {
        DataSource pool = fixture.pool(TestDatabase.POSTGRESQL);
        Outbox outbox = fixture.outbox(TestDatabase.POSTGRESQL);
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            assertThatThrownBy(() -> outbox.append(tx, "orders", null, utf8("x"), Map.of("message-id", "mine")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'message-id'");
            assertThatThrownBy(() -> outbox.append(tx, "orders", null, utf8("x"), Map.of(" ", "v")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("but was ' '");
            assertThatThrownBy(() -> outbox.append(tx, null, null, utf8("x"), Map.of()))
                    .isInstanceOf(NullPointerException.class).hasMessage("destination");
            tx.rollback();
        }
        assertThatThrownBy(() -> Outbox.builder(pool).table("outbox; DROP TABLE x").build())
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("'outbox; DROP TABLE x'");
        assertThatThrownBy(() -> Outbox.builder(pool).retention(Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT5S");
    }

    @Test
    @DisplayName("createSchema is idempotent and schedules the purge with pg_cron, with the outbox's retention")
    void schemaAndPurgeJob() throws SQLException {
        DataSource pool = fixture.pool(TestDatabase.POSTGRESQL);
        Outbox outbox = fixture.outbox(TestDatabase.POSTGRESQL, builder -> builder.retention(Duration.ofHours(1)));
        OutboxSchemaReport report = outbox.createSchema();
        assertThat(report.problem()).isEmpty();
        assertThat(report.purgeScheduled()).isTrue();
        try (Connection db = pool.getConnection();
                PreparedStatement job = db.prepareStatement("SELECT schedule, command FROM cron.job WHERE jobname = ?")) {
            job.setString(1, report.jobName());
            try (ResultSet row = job.executeQuery()) {
                assertThat(row.next()).as("job " + report.jobName()).isTrue();
                assertThat(row.getString(1)).isEqualTo("* * * * *");
                assertThat(row.getString(2)).isEqualTo(report.purgeCommand())
                        .contains("interval '3600 seconds'").contains(outbox.table() + "_purge");
            }
            // The command the job runs works, and the index the relay scans exists.
            try (Statement statement = db.createStatement()) {
                statement.execute(report.purgeCommand());
                try (ResultSet index = statement.executeQuery("SELECT indexdef FROM pg_indexes WHERE indexname = '"
                        + outbox.table() + "_unpublished_idx'")) {
                    assertThat(index.next()).isTrue();
                    assertThat(index.getString(1)).contains("WHERE (published_at IS NULL)");
                }
            }
        }
        outbox.dropSchema(null);
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet row = statement.executeQuery("SELECT count(*) FROM cron.job WHERE jobname = '"
                        + report.jobName() + "'")) {
            row.next();
            assertThat(row.getInt(1)).as("job removed with the schema").isZero();
        }
        outbox.createSchema();      // for @AfterEach
    }

    @Test
    @DisplayName("MariaDB: createSchema is idempotent, schedules the purge as an EVENT with the outbox's retention, and"
            + " the event's command deletes old published events; dropSchema removes it")
    void schemaAndPurgeEventOnMariaDb() throws SQLException {
        DataSource pool = fixture.pool(TestDatabase.MARIADB);
        Outbox outbox = fixture.outbox(TestDatabase.MARIADB, builder -> builder.retention(Duration.ofHours(1)));
        OutboxSchemaReport report = outbox.createSchema();
        assertThat(report.jobName()).isEqualTo(outbox.table() + "_purge_event");
        assertThat(report.purgeCommand()).isEqualTo("CALL `" + outbox.table() + "_purge`(3600, 5000, 100)");
        boolean schedulerOn = "ON".equals(single(pool, "SELECT @@GLOBAL.event_scheduler"));
        assertThat(report.purgeScheduled()).isEqualTo(schedulerOn);
        if (!schedulerOn) {
            assertThat(report.problem()).get().asString().contains("event scheduler is OFF")
                    .contains("Outbox.purgePublished");
        }
        assertThat(single(pool, "SELECT CONCAT(INTERVAL_VALUE, ' ', INTERVAL_FIELD, ' ', STATUS, ' ', EVENT_DEFINITION)"
                + " FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE() AND EVENT_NAME = '"
                + report.jobName() + "'")).isEqualTo("1 MINUTE ENABLED " + report.purgeCommand());
        assertThat(single(pool, "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS"
                + " WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME = '" + outbox.table() + "_unpublished_idx'"))
                .as("the relay's index").isEqualTo("published_at,parked_at,id");
        // A new retention reaches the event's command.
        Outbox longer = Outbox.builder(pool).table(outbox.table()).retention(Duration.ofHours(2)).build();
        assertThat(longer.createSchema().purgeCommand()).contains("(7200, 5000, 100)");

        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            for (int i = 0; i < 3; i++) {
                outbox.append(tx, "orders", "k" + i, utf8("e" + i), Map.of());
            }
            tx.commit();
        }
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement()) {
            statement.execute("UPDATE " + outbox.table() + " SET published_at = UTC_TIMESTAMP(6) - INTERVAL 3 HOUR"
                    + " WHERE `key` IN ('k0', 'k1')");
            statement.execute(report.purgeCommand().replace("3600", "7200"));
        }
        assertThat(single(pool, "SELECT GROUP_CONCAT(`key`) FROM " + outbox.table())).isEqualTo("k2");

        outbox.dropSchema(null);
        assertThat(single(pool, "SELECT COUNT(*) FROM information_schema.EVENTS WHERE EVENT_NAME = '"
                + report.jobName() + "'")).isEqualTo("0");
        assertThat(single(pool, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_NAME = '"
                + outbox.table() + "_purge'")).isEqualTo("0");
    }

    @Test
    @DisplayName("MariaDB: notifyRelays is refused, at build() when the database is named, at the first call when"
            + " found; Builder.database names it")
    void notifyRelaysIsRefusedOnMariaDb() {
        DataSource pool = fixture.pool(TestDatabase.MARIADB);
        assertThatThrownBy(() -> Outbox.builder(pool).database(OutboxDatabase.MYSQL).notifyRelays(true).build())
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("LISTEN/NOTIFY");
        Outbox found = Outbox.builder(pool).table(unique("outbox")).notifyRelays(true).build();
        assertThatThrownBy(found::createSchema).isInstanceOf(DedupConfigurationException.class)
                .hasMessage("notifyRelays(true) needs PostgreSQL's LISTEN/NOTIFY, and the outbox is on MYSQL: leave"
                        + " it off, the relays poll");
        Outbox named = fixture.outbox(TestDatabase.MARIADB, builder -> builder.database(OutboxDatabase.MYSQL));
        assertThat(named.pendingCount()).isZero();
    }

    @Test
    @DisplayName("MariaDB through MySQL Connector/J (which names it MySQL): found as MYSQL; append, relay, purge work")
    void mariaDbThroughMysqlConnector() throws SQLException {
        URI address = URI.create(TestDatabase.MARIADB.jdbcUrl().substring("jdbc:".length()));
        MysqlDataSource connectorJ = new MysqlDataSource();
        connectorJ.setUrl("jdbc:mysql://" + address.getAuthority() + address.getPath() + "?" + address.getQuery());
        try (Connection probe = connectorJ.getConnection()) {
            assertThat(probe.getMetaData().getDatabaseProductName()).isEqualTo("MySQL");
            assertThat(OutboxDatabase.of(probe)).isEqualTo(OutboxDatabase.MYSQL);
        }
        Outbox outbox = Outbox.builder(connectorJ).table(unique("outbox")).build();
        outbox.createSchema();
        try {
            try (Connection tx = connectorJ.getConnection()) {
                tx.setAutoCommit(false);
                outbox.append(tx, "orders", "k", utf8("e"), Map.of("type", "Created"));
                tx.commit();
            }
            List<OutboxEvent> published = new ArrayList<>();
            assertThat(OutboxRelay.builder(outbox, published::addAll).build().relayOnce()).isEqualTo(1);
            assertThat(published.get(0).headers()).containsEntry("type", "Created");
            assertThat(outbox.pendingCount()).isZero();
            assertThat(outbox.purgePublished(10)).as("published just now, within the retention").isZero();
        } finally {
            outbox.dropSchema(null);
        }
    }

    @Test
    @DisplayName("docs/mysql.md shows the table createSchema makes on MySQL and MariaDB")
    void mysqlPageShowsTheSchema() throws IOException {
        String page = Files.readString(Path.of("../docs/mysql.md")).replaceAll("[ \\t]*--[^\\n]*", "");
        MysqlOutboxDialect dialect = new MysqlOutboxDialect(TableName.parse("outbox", "database"));
        assertThat(page).contains(dialect.createTable() + ";");
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("an append commits at once while a relay holds a batch, though the pool runs at REPEATABLE READ")
    void appendsGoOnWhileARelayHoldsItsBatch(TestDatabase database) throws Exception {
        HikariDataSource pool = fixture.pool(database);
        Outbox outbox = fixture.outbox(database);
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            outbox.append(tx, "orders", "k", utf8("first"), Map.of());
            tx.commit();
        }
        CountDownLatch publishing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        OutboxRelay relay = OutboxRelay.builder(outbox, events -> {
            publishing.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }).build();
        CompletableFuture<Integer> cycle = CompletableFuture.supplyAsync(relay::relayOnce);
        try (Connection tx = pool.getConnection()) {
            assertThat(publishing.await(10, TimeUnit.SECONDS)).as("the relay holds its batch").isTrue();
            tx.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            tx.setAutoCommit(false);
            try (Statement timeout = tx.createStatement()) {
                if (database == TestDatabase.MARIADB) {   // fail in 2 s rather than InnoDB's 50 s lock wait
                    timeout.execute("SET SESSION innodb_lock_wait_timeout = 2");
                }
            }
            long started = System.nanoTime();
            outbox.append(tx, "orders", "k", utf8("second"), Map.of());
            tx.commit();
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
        } finally {
            release.countDown();
        }
        assertThat(cycle.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(outbox.pendingCount()).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("purgePublished deletes published events older than the retention only; metrics see the rest")
    void purgeAndMetrics(TestDatabase database) throws SQLException {
        DataSource pool = fixture.pool(database);
        Outbox outbox = fixture.outbox(database, builder -> builder.retention(Duration.ofHours(1)));
        assertThat(outbox.oldestUnpublishedAge()).isEmpty();
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            for (int i = 0; i < 6; i++) {
                outbox.append(tx, "orders", "k" + i, utf8("e" + i), Map.of());
            }
            tx.commit();
        }
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement()) {
            // 2 published 2 hours ago (past the 1 h retention), 2 published just now, 2 pending from 5 minutes ago.
            statement.execute("UPDATE " + outbox.table() + " SET published_at = " + database.minutesAgo(120)
                    + " WHERE " + database.key() + " IN ('k0', 'k1')");
            statement.execute("UPDATE " + outbox.table() + " SET published_at = " + database.now() + " WHERE "
                    + database.key() + " IN ('k2', 'k3')");
            statement.execute("UPDATE " + outbox.table() + " SET created_at = " + database.minutesAgo(5)
                    + " WHERE " + database.key() + " = 'k4'");
        }
        assertThat(outbox.pendingCount()).isEqualTo(2);
        assertThat(outbox.oldestUnpublishedAge()).hasValueSatisfying(age ->
                assertThat(age).isBetween(Duration.ofMinutes(5), Duration.ofMinutes(6)));
        assertThat(outbox.purgePublished(1)).isEqualTo(1);
        assertThat(outbox.purgePublished(100)).isEqualTo(1);
        assertThat(outbox.purgePublished(100)).isZero();
        List<String> left = new ArrayList<>();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT " + database.key() + " FROM " + outbox.table()
                        + " ORDER BY id")) {
            while (rows.next()) {
                left.add(rows.getString(1));
            }
        }
        assertThat(left).containsExactly("k2", "k3", "k4", "k5");
        assertThatThrownBy(() -> outbox.purgePublished(0)).hasMessageContaining("but was 0");
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    @DisplayName("a table made before parking: the error names the missing column and the fix; createSchema adds it")
    void createSchemaUpgradesAnOlderTable(TestDatabase database) throws SQLException {
        DataSource pool = fixture.pool(database);
        Outbox older = Outbox.builder(pool).table(unique("outbox")).build();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement()) {
            statement.execute(database.tableBeforeParking(older.table()));
        }
        try {
            try (Connection tx = pool.getConnection()) {
                tx.setAutoCommit(false);
                older.append(tx, "orders", "k", utf8("e"), Map.of());
                tx.commit();
            }
            assertThatThrownBy(older::pendingCount).isInstanceOf(DedupStoreException.class)
                    .hasMessageContaining("parked_at").hasMessageContaining("Outbox.createSchema()")
                    .hasMessageContaining(database == TestDatabase.POSTGRESQL ? "ADD COLUMN IF NOT EXISTS attempts"
                            : "ADD COLUMN `attempts`");
            older.createSchema();
            assertThat(older.pendingCount()).as("the event kept, waiting").isEqualTo(1);
            assertThat(older.parkedCount()).isZero();
        } finally {
            older.dropSchema(null);
        }
    }

    @Test
    @DisplayName("maxAttempts is refused outside 1 to 1,000,000, naming the value")
    void maxAttemptsIsChecked() {
        Outbox outbox = fixture.outbox(TestDatabase.POSTGRESQL);
        OutboxPublisher publisher = events -> { };
        assertThatThrownBy(() -> OutboxRelay.builder(outbox, publisher).maxAttempts(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts must be from 1 to 1000000, but"
                        + " was 0");
        assertThat(OutboxRelay.builder(outbox, publisher).maxAttempts(1_000_000).build()).isNotNull();
    }

    private static String single(DataSource pool, String query) throws SQLException {
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet row = statement.executeQuery(query)) {
            row.next();
            return row.getString(1);
        }
    }

    private static int count(Connection connection, Outbox outbox) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery("SELECT count(*) FROM " + outbox.table())) {
            row.next();
            return row.getInt(1);
        }
    }
}
