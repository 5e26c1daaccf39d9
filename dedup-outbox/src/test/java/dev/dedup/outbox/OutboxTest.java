package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The outbox table on the real PostgreSQL: append in the caller's transaction, schema, purge, metrics. */
class OutboxTest {
    private static HikariDataSource pool;
    private Outbox outbox;

    @BeforeAll
    static void connect() {
        pool = OutboxTestSupport.pool(4);
    }

    @AfterAll
    static void disconnect() {
        pool.close();
    }

    @BeforeEach
    void createOutbox() {
        outbox = Outbox.builder(pool).table(unique("outbox")).retention(Duration.ofHours(1)).build();
        outbox.createSchema();
    }

    @AfterEach
    void dropOutbox() {
        outbox.dropSchema(null);
    }

    @Test
    @DisplayName("append in a committed transaction: one row with a UUID message id, with the business write")
    void committedAppendIsStored() throws SQLException {
        String messageId;
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            messageId = outbox.append(tx, "orders", "order-1", utf8("created"), Map.of("type", "OrderCreated"));
            assertThat(outbox.pendingCount()).as("invisible before the commit").isZero();
            tx.commit();
        }
        assertThat(UUID.fromString(messageId).toString()).isEqualTo(messageId);
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet row = statement.executeQuery("SELECT message_id, destination, key, payload,"
                        + " headers ->> 'type', published_at FROM " + outbox.table())) {
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

    @Test
    @DisplayName("append in a rolled-back transaction leaves no event")
    void rolledBackAppendLeavesNothing() throws SQLException {
        try (Connection tx = pool.getConnection()) {
            tx.setAutoCommit(false);
            outbox.append(tx, "orders", "order-1", utf8("created"), Map.of());
            assertThat(count(tx)).as("inside the transaction").isEqualTo(1);
            tx.rollback();
        }
        assertThat(outbox.pendingCount()).isZero();
        try (Connection db = pool.getConnection()) {
            assertThat(count(db)).isZero();
        }
    }

    @Test
    @DisplayName("append refuses an auto-commit connection, with the inbox's rule and message")
    void autoCommitIsRefused() throws SQLException {
        try (Connection autoCommit = pool.getConnection()) {
            assertThat(autoCommit.getAutoCommit()).isTrue();
            assertThatThrownBy(() -> outbox.append(autoCommit, "orders", null, utf8("x"), Map.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("Outbox.append needs a connection with auto-commit off (setAutoCommit(false)), so"
                            + " that the event commits or rolls back with your writes");
            assertThat(count(autoCommit)).isZero();
        }
    }

    @Test
    @DisplayName("bad arguments are refused, naming the value; message-id is the outbox's own header")
    void badArguments() throws SQLException {
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
    @DisplayName("purgePublished deletes published events older than the retention only; metrics see the rest")
    void purgeAndMetrics() throws SQLException {
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
            statement.execute("UPDATE " + outbox.table() + " SET published_at = now() - interval '2 hours'"
                    + " WHERE key IN ('k0', 'k1')");
            statement.execute("UPDATE " + outbox.table() + " SET published_at = now() WHERE key IN ('k2', 'k3')");
            statement.execute("UPDATE " + outbox.table() + " SET created_at = now() - interval '5 minutes'"
                    + " WHERE key = 'k4'");
        }
        assertThat(outbox.pendingCount()).isEqualTo(2);
        assertThat(outbox.oldestUnpublishedAge()).hasValueSatisfying(age ->
                assertThat(age).isBetween(Duration.ofMinutes(5), Duration.ofMinutes(6)));
        assertThat(outbox.purgePublished(1)).isEqualTo(1);
        assertThat(outbox.purgePublished(100)).isEqualTo(1);
        assertThat(outbox.purgePublished(100)).isZero();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT string_agg(key, ',' ORDER BY key) FROM "
                        + outbox.table())) {
            rows.next();
            assertThat(rows.getString(1)).isEqualTo("k2,k3,k4,k5");
        }
        assertThatThrownBy(() -> outbox.purgePublished(0)).hasMessageContaining("but was 0");
    }

    @Test
    @DisplayName("a table made before parking: the error names the missing column and the fix; createSchema adds it")
    void createSchemaUpgradesAnOlderTable() throws SQLException {
        Outbox older = Outbox.builder(pool).table(unique("outbox")).build();
        try (Connection db = pool.getConnection(); Statement statement = db.createStatement()) {
            // The table as the previous version created it.
            statement.execute("CREATE TABLE " + older.table() + " (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                    + " message_id uuid NOT NULL, destination text NOT NULL, key text, payload bytea NOT NULL,"
                    + " headers jsonb NOT NULL DEFAULT '{}', created_at timestamptz NOT NULL DEFAULT"
                    + " statement_timestamp(), published_at timestamptz)");
        }
        try {
            try (Connection tx = pool.getConnection()) {
                tx.setAutoCommit(false);
                older.append(tx, "orders", "k", utf8("e"), Map.of());
                tx.commit();
            }
            assertThatThrownBy(older::pendingCount).isInstanceOf(DedupStoreException.class)
                    .hasMessageContaining("parked_at").hasMessageContaining("Outbox.createSchema()")
                    .hasMessageContaining("ADD COLUMN IF NOT EXISTS attempts");
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
        OutboxPublisher publisher = events -> { };
        assertThatThrownBy(() -> OutboxRelay.builder(outbox, publisher).maxAttempts(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxAttempts must be from 1 to 1000000, but"
                        + " was 0");
        assertThat(OutboxRelay.builder(outbox, publisher).maxAttempts(1_000_000).build()).isNotNull();
    }

    private int count(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery("SELECT count(*) FROM " + outbox.table())) {
            row.next();
            return row.getInt(1);
        }
    }
}
