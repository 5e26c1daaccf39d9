package dev.dedup.outbox;

import dev.dedup.jdbc.TableName;
import dev.dedup.store.mysql.MysqlDdl;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outbox on MySQL 8 and MariaDB 10.6+ (InnoDB): every statement it runs there, built once from the checked name.
 *
 * <p>Times are {@code DATETIME(6)} in UTC ({@code UTC_TIMESTAMP(6)}), so the session's time zone does not matter.
 * The relay's transaction, the purge and the replay run at READ COMMITTED: at InnoDB's default REPEATABLE READ their
 * range scans would take gap locks, and appends insert their rows into the gap after the last unpublished one.
 */
final class MysqlOutboxDialect implements OutboxDialect {
    private static final Logger log = LoggerFactory.getLogger(MysqlOutboxDialect.class);
    private static final char QUOTE = '`';
    private static final String NOW = "UTC_TIMESTAMP(6)";
    static final String EVENT_SUFFIX = "_purge_event";
    static final String EVENT_INTERVAL = "1 MINUTE";
    /** How long createSchema waits for another replica creating the same schema. */
    private static final int SCHEMA_LOCK_WAIT_SECONDS = 30;
    /** Each parking column and its type, in the order an older table gets them. */
    private static final String[][] PARKING = {
        {"attempts", "INT NOT NULL DEFAULT 0"}, {"parked_at", "DATETIME(6)"},
        {"last_error", "TEXT CHARACTER SET utf8mb4"},
    };
    /** Next transaction only: nothing is left on a pooled connection. */
    private static final String READ_COMMITTED = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED";

    private final TableName name;
    private final String table;
    private final String unpublishedIndex;

    MysqlOutboxDialect(TableName name) {
        this.name = name;
        this.table = name.quoted(QUOTE);
        this.unpublishedIndex = QUOTE + name.name() + "_unpublished_idx" + QUOTE;
    }

    // ----- schema -----------------------------------------------------------------------------------------------

    @Override
    public OutboxSchemaReport createSchema(Connection connection, Duration retention, boolean notifyRelays,
            DataSource cronDatabase) throws SQLException {
        // Replicas that start together all create the schema; the named lock makes them take turns, so none drops
        // the procedure or the event while another creates it.
        return MysqlDdl.underLock(connection, "dedup-outbox-schema:" + name.display(), "createSchema of outbox "
                + name.display(), SCHEMA_LOCK_WAIT_SECONDS, locked -> createLocked(locked, retention));
    }

    private OutboxSchemaReport createLocked(Connection connection, Duration retention) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(createTable());
            Set<String> columns = columns(connection);
            for (String[] column : PARKING) {
                if (!columns.contains(column[0])) {       // a table made before parking lacks them
                    statement.execute("ALTER TABLE " + table + " ADD COLUMN `" + column[0] + "` " + column[1]);
                }
            }
            if (!hasUnpublishedIndex(connection)) {
                statement.execute("ALTER TABLE " + table + " ADD " + unpublishedKey());
            }
            statement.execute(dropPurgeProcedure());
            statement.execute(createPurgeProcedure());
        }
        String command = callPurge(retention.toSeconds(), Outbox.PURGE_BATCH, Outbox.PURGE_MAX_BATCHES);
        String eventName = name.name() + EVENT_SUFFIX;
        Optional<String> problem;
        try (Statement statement = connection.createStatement()) {
            // Dropped and created again, so that a new retention reaches the event's command.
            statement.execute(dropEvent());
            statement.execute("CREATE EVENT " + name.derived(EVENT_SUFFIX, QUOTE) + " ON SCHEDULE EVERY "
                    + EVENT_INTERVAL + " DO " + command);
            problem = MysqlDdl.eventProblem(connection, name, EVENT_SUFFIX, "Outbox.purgePublished(batchSize)");
        } catch (SQLException e) {
            problem = Optional.of("the purge event could not be created (" + e.getMessage() + "); grant the EVENT"
                    + " privilege, or schedule Outbox.purgePublished(batchSize) yourself");
        }
        problem.ifPresent(reason -> log.warn("outbox table {} is not purged on its own: {}. Or run: {}",
                name.display(), reason, command));
        return new OutboxSchemaReport(name.display(), problem.isEmpty(), eventName, command, problem);
    }

    /**
     * The table. {@code message_id} is a random UUID as text, unique by its random bits without a unique index that
     * every append would maintain. Keys compare byte for byte ({@code utf8mb4_bin}), as on PostgreSQL. One index
     * serves the relay (the unpublished rows, whose {@code published_at} and {@code parked_at} are NULL, in id order)
     * and the purge (published rows by age).
     */
    String createTable() {
        return "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                + "    `id`           BIGINT      NOT NULL AUTO_INCREMENT,\n"
                + "    `message_id`   CHAR(36)    CHARACTER SET ascii NOT NULL,\n"
                + "    `destination`  TEXT        CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,\n"
                + "    `key`          TEXT        CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,\n"
                + "    `payload`      LONGBLOB    NOT NULL,\n"
                + "    `headers`      JSON        NOT NULL,\n"
                + "    `created_at`   DATETIME(6) NOT NULL,\n"
                + "    `published_at` DATETIME(6),\n"
                + "    `attempts`     INT         NOT NULL DEFAULT 0,\n"
                + "    `parked_at`    DATETIME(6),\n"
                + "    `last_error`   TEXT        CHARACTER SET utf8mb4,\n"
                + "    PRIMARY KEY (`id`),\n"
                + "    " + unpublishedKey() + "\n"
                + ") ENGINE=InnoDB";
    }

    private String unpublishedKey() {
        return "KEY " + unpublishedIndex + " (`published_at`, `parked_at`, `id`)";
    }

    /** For a table made before parking; createSchema adds only the missing columns (MySQL has no IF NOT EXISTS). */
    @Override
    public String addParkingColumns() {
        StringBuilder alter = new StringBuilder("ALTER TABLE " + table);
        for (String[] column : PARKING) {
            alter.append(" ADD COLUMN `").append(column[0]).append("` ").append(column[1]).append(',');
        }
        return alter.append(" ADD ").append(unpublishedKey()).toString();
    }

    /** 1054, SQLState 42S22: unknown column. */
    @Override
    public boolean isMissingColumn(SQLException e) {
        return e.getErrorCode() == 1054 || "42S22".equals(e.getSQLState());
    }

    private Set<String> columns(Connection connection) throws SQLException {
        Set<String> columns = new HashSet<>();
        try (PreparedStatement query = describe(connection, "SELECT COLUMN_NAME FROM information_schema.COLUMNS"
                + " WHERE " + thisTable(), name.name()); ResultSet rows = query.executeQuery()) {
            while (rows.next()) {
                columns.add(rows.getString(1).toLowerCase(Locale.ROOT));
            }
        }
        return columns;
    }

    private boolean hasUnpublishedIndex(Connection connection) throws SQLException {
        try (PreparedStatement query = describe(connection, "SELECT COUNT(*) FROM information_schema.STATISTICS"
                + " WHERE " + thisTable() + " AND INDEX_NAME = ?", name.name(), name.name() + "_unpublished_idx");
                ResultSet row = query.executeQuery()) {
            row.next();
            return row.getInt(1) > 0;
        }
    }

    private String thisTable() {
        return "TABLE_SCHEMA = " + (name.qualifier() == null ? "DATABASE()" : "?") + " AND TABLE_NAME = ?";
    }

    /** An information_schema query, bound: the database if named, then {@code values}. */
    private PreparedStatement describe(Connection connection, String sql, String... values) throws SQLException {
        PreparedStatement query = connection.prepareStatement(sql);
        int parameter = 1;
        if (name.qualifier() != null) {
            query.setString(parameter++, name.qualifier());
        }
        for (String value : values) {
            query.setString(parameter++, value);
        }
        return query;
    }

    /**
     * Deletes published rows older than the retention in batches, each its own transaction at READ COMMITTED
     * (the event's session has auto-commit on), so a backlog never holds locks for long.
     */
    private String createPurgeProcedure() {
        return "CREATE PROCEDURE " + name.derived("_purge", QUOTE)
                + "(IN retention_seconds BIGINT, IN batch_size INT, IN max_batches INT)\n"
                + "BEGIN\n"
                + "    DECLARE batches INT DEFAULT 0;\n"
                + "    DECLARE deleted INT DEFAULT batch_size;\n"
                + "    WHILE deleted >= batch_size AND batches < max_batches DO\n"
                + "        " + READ_COMMITTED + ";\n"
                + "        " + purgeBatch("retention_seconds", "batch_size") + ";\n"
                + "        SET deleted = ROW_COUNT();\n"
                + "        SET batches = batches + 1;\n"
                + "    END WHILE;\n"
                + "END";
    }

    private String dropPurgeProcedure() {
        return "DROP PROCEDURE IF EXISTS " + name.derived("_purge", QUOTE);
    }

    private String dropEvent() {
        return "DROP EVENT IF EXISTS " + name.derived(EVENT_SUFFIX, QUOTE);
    }

    /** One bounded batch, oldest first through the index; the arguments are parameter markers or variables. */
    private String purgeBatch(String retentionSeconds, String limit) {
        return "DELETE FROM " + table + " WHERE `published_at` < " + NOW + " - INTERVAL " + retentionSeconds
                + " SECOND ORDER BY `published_at` LIMIT " + limit;
    }

    private String callPurge(long retentionSeconds, int batchSize, int maxBatches) {
        return "CALL " + name.derived("_purge", QUOTE) + "(" + retentionSeconds + ", " + batchSize + ", " + maxBatches
                + ")";
    }

    @Override
    public int purgePublished(Connection connection, Duration retention, int batchSize) throws SQLException {
        beginTransaction(connection);
        try (PreparedStatement delete = connection.prepareStatement(purgeBatch("?", "?"))) {
            delete.setLong(1, retention.toSeconds());
            delete.setInt(2, batchSize);
            return delete.executeUpdate();
        }
    }

    @Override
    public void dropSchema(Connection connection, DataSource cronDatabase) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(dropEvent());
            statement.execute(dropPurgeProcedure());
            statement.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    // ----- the append and the relay -----------------------------------------------------------------------------

    @Override
    public String append() {
        return "INSERT INTO " + table + " (`message_id`, `destination`, `key`, `payload`, `headers`, `created_at`)"
                + " VALUES (?, ?, ?, ?, ?, " + NOW + ")";
    }

    /**
     * No key locks here, unlike on PostgreSQL: MySQL's named locks ({@code GET_LOCK}) belong to the session, not the
     * transaction, and would stay on a pooled connection whose release failed. The relay's order check alone keeps
     * each key's order; relays contending for a key put back more events. The index is forced: on a table of
     * mostly published rows, a scan of the primary key in id order would read them all.
     */
    @Override
    public String nextBatch() {
        return "SELECT `id`, `message_id`, `destination`, `key`, `payload`, `headers`,"
                + " TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', `created_at`) FROM " + table + " FORCE INDEX ("
                + unpublishedIndex + ") WHERE `published_at` IS NULL AND `parked_at` IS NULL"
                + " ORDER BY `id` LIMIT ? FOR UPDATE SKIP LOCKED";
    }

    @Override
    public String unpublishedOfKeys(int keys) {
        return "SELECT `id`, `key` FROM " + table + " FORCE INDEX (" + unpublishedIndex + ")"
                + " WHERE `published_at` IS NULL AND `parked_at` IS NULL AND `key` IN (" + markers(keys)
                + ") AND `id` <= ? ORDER BY `id`";
    }

    @Override
    public String markPublished(int ids) {
        return "UPDATE " + table + " SET `published_at` = " + NOW + " WHERE `id` IN (" + markers(ids) + ")";
    }

    private static String markers(int count) {
        return String.join(", ", Collections.nCopies(count, "?"));
    }

    /** One parameter per value. */
    @Override
    public int bindAll(PreparedStatement statement, int first, String type, List<?> values) throws SQLException {
        int parameter = first;
        for (Object value : values) {
            statement.setObject(parameter++, value);
        }
        return parameter;
    }

    /**
     * One UPDATE, whose {@code parked_at} is assigned before {@code attempts} (MySQL assigns left to right, so it
     * sees the old count), then a read of which rows it parked: MySQL's UPDATE returns no rows, and this
     * transaction holds them.
     */
    @Override
    public List<Long> recordRejections(Connection connection, int maxAttempts, List<Long> ids, List<String> errors)
            throws SQLException {
        String idList = markers(ids.size());
        try (PreparedStatement update = connection.prepareStatement("UPDATE " + table + " SET `parked_at` ="
                + " IF(`attempts` + 1 >= ?, " + NOW + ", NULL), `last_error` = CASE `id`"
                + " WHEN ? THEN ?".repeat(ids.size()) + " END, `attempts` = `attempts` + 1"
                + " WHERE `id` IN (" + idList + ") AND `published_at` IS NULL AND `parked_at` IS NULL")) {
            int parameter = 1;
            update.setInt(parameter++, maxAttempts);
            for (int i = 0; i < ids.size(); i++) {
                update.setLong(parameter++, ids.get(i));
                update.setString(parameter++, errors.get(i));
            }
            bindAll(update, parameter, "bigint", ids);
            update.executeUpdate();
        }
        List<Long> parked = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT `id` FROM " + table + " WHERE `id` IN ("
                + idList + ") AND `parked_at` IS NOT NULL")) {
            bindAll(select, 1, "bigint", ids);
            try (ResultSet rows = select.executeQuery()) {
                while (rows.next()) {
                    parked.add(rows.getLong(1));
                }
            }
        }
        return parked;
    }

    /**
     * READ COMMITTED for the next transaction: no gap locks (appends go on while the relay holds its batch), and each
     * read a new snapshot, so the order check sees what other relays committed after this one locked its batch.
     */
    @Override
    public void beginTransaction(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(READ_COMMITTED);
        }
    }

    // ----- metrics ----------------------------------------------------------------------------------------------

    @Override
    public String pending() {
        return "SELECT COUNT(*) FROM " + table + " WHERE `published_at` IS NULL AND `parked_at` IS NULL";
    }

    @Override
    public String parked() {
        return "SELECT COUNT(*) FROM " + table + " WHERE `published_at` IS NULL AND `parked_at` IS NOT NULL";
    }

    @Override
    public String replayParked() {
        return "UPDATE " + table + " SET `parked_at` = NULL, `attempts` = 0"
                + " WHERE `published_at` IS NULL AND `parked_at` IS NOT NULL";
    }

    @Override
    public String oldestUnpublishedMillis() {
        return "SELECT TIMESTAMPDIFF(MICROSECOND, `created_at`, " + NOW + ") DIV 1000 FROM " + table + " FORCE INDEX ("
                + unpublishedIndex + ") WHERE `published_at` IS NULL AND `parked_at` IS NULL ORDER BY `id` LIMIT 1";
    }
}
