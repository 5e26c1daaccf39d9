package dev.dedup.outbox;

import dev.dedup.jdbc.TableName;
import dev.dedup.store.postgres.PgCron;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The outbox on PostgreSQL: every statement it runs there, built once from the checked name. */
final class PostgresOutboxDialect implements OutboxDialect {
    private static final Logger log = LoggerFactory.getLogger(PostgresOutboxDialect.class);
    private static final char QUOTE = '"';
    /** Once a minute: the finest schedule pg_cron 1.4 offers. */
    static final String CRON_SCHEDULE = "* * * * *";
    /** The advisory lock that serialises schema creation per table, across processes. */
    private static final String SCHEMA_LOCK = "dedup-outbox-schema:";

    private final TableName name;
    private final String table;

    PostgresOutboxDialect(TableName name) {
        this.name = name;
        this.table = name.quoted(QUOTE);
    }

    // ----- schema -----------------------------------------------------------------------------------------------

    @Override
    public OutboxSchemaReport createSchema(Connection connection, Duration retention, boolean notifyRelays,
            DataSource cronDatabase) throws SQLException {
        // Replicas that start together all create the schema; PostgreSQL refuses concurrent CREATE OR REPLACE
        // PROCEDURE ("tuple concurrently updated"), so they take turns. A session lock, freed with the connection.
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_lock(hashtext(?))")) {
            lock.setString(1, SCHEMA_LOCK + name.display());
            lock.execute();
        }
        try {
            return createLocked(connection, retention, notifyRelays, cronDatabase);
        } finally {
            try (PreparedStatement unlock = connection.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
                unlock.setString(1, SCHEMA_LOCK + name.display());
                unlock.execute();
            }
        }
    }

    private OutboxSchemaReport createLocked(Connection connection, Duration retention, boolean notifyRelays,
            DataSource cronDatabase) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(createTable());
            if (parkingColumns(statement) < 3) {
                statement.execute(addParkingColumns());  // a table made by an earlier version lacks them
            }
            statement.execute(createUnpublishedIndex());
            statement.execute(createPublishedIndex());
            statement.execute(createPurgeProcedure());
            statement.execute(dropNotifyTrigger());
            if (notifyRelays) {
                statement.execute(createNotifyFunction());
                statement.execute(createNotifyTrigger());
            } else {
                statement.execute(dropNotifyFunction());
            }
        }
        String command = callPurge(retention.toSeconds(), Outbox.PURGE_BATCH, Outbox.PURGE_MAX_BATCHES);
        String jobName = jobName(connection);
        Optional<String> problem = PgCron.schedule(connection, cronDatabase, jobName, CRON_SCHEDULE, command);
        problem.ifPresent(reason -> log.warn("outbox table {} has no pg_cron purge job: {}. Schedule"
                + " Outbox.purgePublished(batchSize) yourself, or run: {}", name.display(), reason, command));
        return new OutboxSchemaReport(name.display(), problem.isEmpty(), jobName, command, problem);
    }

    @Override
    public void dropSchema(Connection connection, DataSource cronDatabase) throws SQLException {
        PgCron.unschedule(connection, cronDatabase, jobName(connection));
        try (Statement statement = connection.createStatement()) {
            statement.execute("DROP PROCEDURE IF EXISTS " + name.derived("_purge", QUOTE)
                    + "(interval, integer, integer)");
            statement.execute("DROP TABLE IF EXISTS " + table);
            statement.execute(dropNotifyFunction());
        }
    }

    private String jobName(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery("SELECT current_database()")) {
            row.next();
            return "dedup-outbox-purge:" + row.getString(1) + "." + name.display();
        }
    }

    /**
     * The table. {@code message_id} is a random UUID, unique by its 122 random bits without a unique index that every
     * append would maintain (a random key lands on a random index page); nothing looks an event up by it.
     */
    String createTable() {
        return "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                + "    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
                + "    message_id   uuid        NOT NULL,\n"
                + "    destination  text        NOT NULL,\n"
                + "    key          text,\n"
                + "    payload      bytea       NOT NULL,\n"
                + "    headers      jsonb       NOT NULL DEFAULT '{}',\n"
                + "    created_at   timestamptz NOT NULL DEFAULT statement_timestamp(),\n"
                + "    published_at timestamptz,\n"
                + "    attempts     integer     NOT NULL DEFAULT 0,\n"
                + "    parked_at    timestamptz,\n"
                + "    last_error   text\n"
                + ")";
    }

    /**
     * Adds the columns of poison-event parking to a table made before them. A constant default and nullable columns:
     * PostgreSQL 11+ adds them without rewriting the table.
     */
    @Override
    public String addParkingColumns() {
        return "ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 0,"
                + " ADD COLUMN IF NOT EXISTS parked_at timestamptz, ADD COLUMN IF NOT EXISTS last_error text";
    }

    /** 42703: undefined column. */
    @Override
    public boolean isMissingColumn(SQLException e) {
        return "42703".equals(e.getSQLState());
    }

    /**
     * Counts the parking columns the table has: the ALTER above takes the table's ACCESS EXCLUSIVE lock even when
     * they exist, waiting behind every open append and blocking new ones meanwhile, so it runs only when one is
     * missing.
     */
    private int parkingColumns(Statement statement) throws SQLException {
        try (ResultSet columns = statement.executeQuery("SELECT count(*) FROM pg_attribute WHERE attrelid = '"
                + table.replace("'", "''") + "'::regclass AND attname IN ('attempts', 'parked_at', 'last_error')"
                + " AND NOT attisdropped")) {
            columns.next();
            return columns.getInt(1);
        }
    }

    /** The relay's scan: only unpublished rows, in id order; it stays small however large the table grows. */
    private String createUnpublishedIndex() {
        return "CREATE INDEX IF NOT EXISTS " + unqualified("_unpublished_idx") + " ON " + table
                + " (id) WHERE published_at IS NULL";
    }

    /** The purge's scan: published rows by age. */
    private String createPublishedIndex() {
        return "CREATE INDEX IF NOT EXISTS " + unqualified("_published_at_idx") + " ON " + table
                + " (published_at) WHERE published_at IS NOT NULL";
    }

    /** A name derived from the table's without its schema, as CREATE INDEX and CREATE TRIGGER take it. */
    private String unqualified(String suffix) {
        return QUOTE + name.name() + suffix + QUOTE;
    }

    /**
     * Deletes published rows older than the retention in batches, committing after each, so a backlog never holds
     * locks for long.
     */
    private String createPurgeProcedure() {
        return "CREATE OR REPLACE PROCEDURE " + name.derived("_purge", QUOTE) + "(retention interval,"
                + " batch_size integer DEFAULT 5000, max_batches integer DEFAULT 100)\n"
                + "LANGUAGE plpgsql AS $purge$\n"
                + "DECLARE\n"
                + "    deleted integer;\n"
                + "BEGIN\n"
                + "    FOR batch IN 1..max_batches LOOP\n"
                + "        " + purgeBatch("retention", "batch_size") + ";\n"
                + "        GET DIAGNOSTICS deleted = ROW_COUNT;\n"
                + "        COMMIT;\n"
                + "        EXIT WHEN deleted < batch_size;\n"
                + "    END LOOP;\n"
                + "END\n"
                + "$purge$";
    }

    /** One bounded batch; {@code retention} and {@code limit} are parameter markers or variables. */
    private String purgeBatch(String retention, String limit) {
        return "DELETE FROM " + table + " WHERE id IN (SELECT id FROM " + table
                + " WHERE published_at < statement_timestamp() - " + retention + " ORDER BY published_at LIMIT "
                + limit + " FOR UPDATE SKIP LOCKED)";
    }

    private String callPurge(long retentionSeconds, int batchSize, int maxBatches) {
        return "CALL " + name.derived("_purge", QUOTE) + "(interval '" + retentionSeconds + " seconds', " + batchSize
                + ", " + maxBatches + ")";
    }

    @Override
    public int purgePublished(Connection connection, Duration retention, int batchSize) throws SQLException {
        try (PreparedStatement delete = connection.prepareStatement(purgeBatch("?::interval", "?"))) {
            delete.setString(1, retention.toSeconds() + " seconds");
            delete.setInt(2, batchSize);
            return delete.executeUpdate();
        }
    }

    // ----- LISTEN/NOTIFY ----------------------------------------------------------------------------------------

    /**
     * The channel relays LISTEN on: derived from the name by hash, since a channel is at most 63 bytes and a
     * schema-qualified name can be longer; a collision only wakes another outbox's relays for nothing.
     */
    static String channel(TableName name) {
        return "dedup_outbox_" + Integer.toHexString(name.display().hashCode());
    }

    /** Notifies the channel once per inserting statement; PostgreSQL delivers it at commit, never on rollback. */
    private String createNotifyFunction() {
        return "CREATE OR REPLACE FUNCTION " + name.derived("_notify", QUOTE) + "() RETURNS trigger LANGUAGE plpgsql"
                + " AS $notify$ BEGIN PERFORM pg_notify('" + channel(name) + "', ''); RETURN NULL; END $notify$";
    }

    private String dropNotifyTrigger() {
        return "DROP TRIGGER IF EXISTS " + unqualified("_notify") + " ON " + table;
    }

    private String createNotifyTrigger() {
        return "CREATE TRIGGER " + unqualified("_notify") + " AFTER INSERT ON " + table
                + " FOR EACH STATEMENT EXECUTE FUNCTION " + name.derived("_notify", QUOTE) + "()";
    }

    private String dropNotifyFunction() {
        return "DROP FUNCTION IF EXISTS " + name.derived("_notify", QUOTE) + "()";
    }

    // ----- the append and the relay -----------------------------------------------------------------------------

    @Override
    public String append() {
        return "INSERT INTO " + table + " (message_id, destination, key, payload, headers)"
                + " VALUES (?::uuid, ?, ?, ?, ?::jsonb)";
    }

    /**
     * An event with a key is taken only when this transaction also gets the key's advisory lock, so while one relay
     * holds events of a key the others mostly skip that key. Mostly: the filter tries the lock row by row, so a relay
     * that commits midway through another's scan lets it take a key's later events without the earlier ones it
     * skipped; the relay's order check catches that. The lock is the transaction's: a relay that dies releases it
     * with its connection.
     */
    @Override
    public String nextBatch() {
        return "SELECT id, message_id, destination, key, payload, headers::text,"
                + " (extract(epoch FROM created_at) * 1000000)::bigint FROM " + table
                + " WHERE published_at IS NULL AND parked_at IS NULL"
                + " AND (key IS NULL OR pg_try_advisory_xact_lock(hashtext('" + lockSpace() + "'), hashtext(key)))"
                + " ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED";
    }

    /** The advisory lock space of this table's keys; the name is a checked identifier, safe in a literal. */
    private String lockSpace() {
        return "dedup-outbox:" + name.display();
    }

    @Override
    public String unpublishedOfKeys(int keys) {
        return "SELECT id, key FROM " + table + " WHERE published_at IS NULL AND parked_at IS NULL AND key = ANY(?)"
                + " AND id <= ? ORDER BY id";
    }

    @Override
    public String markPublished(int ids) {
        return "UPDATE " + table + " SET published_at = statement_timestamp() WHERE id = ANY(?)";
    }

    /** One array parameter. */
    @Override
    public int bindAll(PreparedStatement statement, int first, String type, List<?> values) throws SQLException {
        statement.setArray(first, statement.getConnection().createArrayOf(type, values.toArray()));
        return first + 1;
    }

    /** One statement: {@code unnest(ids, errors)} joined to the rows, returning whether each was parked. */
    @Override
    public List<Long> recordRejections(Connection connection, int maxAttempts, List<Long> ids, List<String> errors)
            throws SQLException {
        List<Long> parked = new ArrayList<>();
        try (PreparedStatement update = connection.prepareStatement("UPDATE " + table + " AS t SET attempts ="
                + " t.attempts + 1, last_error = r.error, parked_at = CASE WHEN t.attempts + 1 >= ? THEN"
                + " statement_timestamp() END FROM unnest(?::bigint[], ?::text[]) AS r(id, error)"
                + " WHERE t.id = r.id AND t.published_at IS NULL AND t.parked_at IS NULL"
                + " RETURNING t.id, t.parked_at IS NOT NULL")) {
            update.setInt(1, maxAttempts);
            bindAll(update, 2, "bigint", ids);
            bindAll(update, 3, "text", errors);
            try (ResultSet rows = update.executeQuery()) {
                while (rows.next()) {
                    if (rows.getBoolean(2)) {
                        parked.add(rows.getLong(1));
                    }
                }
            }
        }
        return parked;
    }

    /** Nothing: the relay relies on PostgreSQL's default READ COMMITTED, as it always has, at no round trip. */
    @Override
    public void beginTransaction(Connection connection) {}

    // ----- metrics ----------------------------------------------------------------------------------------------

    @Override
    public String pending() {
        return "SELECT count(*) FROM " + table + " WHERE published_at IS NULL AND parked_at IS NULL";
    }

    @Override
    public String parked() {
        return "SELECT count(*) FROM " + table + " WHERE published_at IS NULL AND parked_at IS NOT NULL";
    }

    @Override
    public String replayParked() {
        return "UPDATE " + table + " SET parked_at = NULL, attempts = 0"
                + " WHERE published_at IS NULL AND parked_at IS NOT NULL";
    }

    @Override
    public String oldestUnpublishedMillis() {
        // The lowest id is the oldest append, and the partial index finds it without scanning the backlog.
        return "SELECT (extract(epoch FROM statement_timestamp() - created_at) * 1000)::bigint FROM " + table
                + " WHERE published_at IS NULL AND parked_at IS NULL ORDER BY id LIMIT 1";
    }
}
