package dev.dedup.store.postgres;

import dev.dedup.DedupConfigurationException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates and checks the dedup table, and schedules its purge with pg_cron where the server allows. */
final class PostgresSchema {
    private static final Logger log = LoggerFactory.getLogger(PostgresSchema.class);

    /** Once a minute: the finest schedule pg_cron 1.4 offers. */
    static final String CRON_SCHEDULE = "* * * * *";
    static final int PURGE_BATCH = 5_000;
    static final int PURGE_MAX_BATCHES = 100;

    /** The column types the store's statements rely on, as information_schema names them. */
    private static final Map<String, String> COLUMNS = new LinkedHashMap<>();

    static {
        COLUMNS.put("namespace", "text");
        COLUMNS.put("key", "text");
        COLUMNS.put("owner", "text");
        COLUMNS.put("state", "text");
        COLUMNS.put("expires_at", "timestamp with time zone");
        COLUMNS.put("result", "bytea");
        COLUMNS.put("created_at", "timestamp with time zone");
        COLUMNS.put("completed_at", "timestamp with time zone");
    }

    /** Added after the first release: {@link #create} adds it to an older table, {@link #validate} asks for that. */
    private static final String FINGERPRINT = "fingerprint";
    private static final String FINGERPRINT_TYPE = "bytea";

    /** The advisory lock that serialises schema creation per table, across processes. */
    private static final String SCHEMA_LOCK = "dedup-schema:";

    private PostgresSchema() {}

    static PostgresSchemaReport create(Connection connection, PostgresTable table, DataSource cronDatabase)
            throws SQLException {
        // Replicas that start together all create the schema: without the lock, PostgreSQL refuses the concurrent
        // CREATE OR REPLACE PROCEDURE with "tuple concurrently updated", and one replica fails to start.
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_lock(hashtext(?))")) {
            lock.setString(1, SCHEMA_LOCK + table.display());
            lock.execute();
        }
        try {
            return createLocked(connection, table, cronDatabase);
        } finally {
            if (!connection.getAutoCommit()) {
                connection.rollback();      // after a failure: an aborted transaction would refuse the unlock
            }
            // A session lock: released here, or by the server when the connection ends.
            try (PreparedStatement unlock = connection.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
                unlock.setString(1, SCHEMA_LOCK + table.display());
                unlock.execute();
            }
            commitIfNeeded(connection);
        }
    }

    private static PostgresSchemaReport createLocked(Connection connection, PostgresTable table,
            DataSource cronDatabase) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            // An unqualified table found elsewhere on the search_path is the one the statements use: keep it.
            if (columns(connection, table).isEmpty()) {
                statement.execute(table.createTable());
            }
            if (!columns(connection, table).containsKey(FINGERPRINT)) {
                log.info("dedup table {}: adding the fingerprint column", table.display());
                statement.execute(table.addFingerprint());
            }
            statement.execute(table.createExpiryIndex());
            statement.execute(table.createPurgeProcedure());
            for (String constraint : stateChecksWithoutFailed(connection, table)) {
                log.info("dedup table {}: allowing state FAILED in CHECK constraint {}", table.display(), constraint);
                for (String ddl : table.allowFailed(constraint)) {
                    statement.execute(ddl);
                }
            }
        }
        commitIfNeeded(connection);
        validate(connection, table);

        String database = single(connection, "SELECT current_database()");
        String jobName = jobName(database, table);
        String command = table.callPurge(PURGE_BATCH, PURGE_MAX_BATCHES);
        Optional<String> problem = PgCron.schedule(connection, cronDatabase, jobName, CRON_SCHEDULE, command);
        problem.ifPresent(reason -> log.warn("dedup table {} has no pg_cron purge job: {}. Schedule"
                + " PostgresDedupStore.purgeExpired(batchSize) yourself, or run: {}", table.display(), reason, command));
        commitIfNeeded(connection);
        return new PostgresSchemaReport(table.display(), problem.isEmpty(), jobName, command, problem);
    }

    private static String jobName(String database, PostgresTable table) {
        return "dedup-purge:" + database + "." + table.display();
    }

    /** Unschedules the purge job where pg_cron is reachable, then drops the procedure and the table. */
    static void drop(Connection connection, PostgresTable table, DataSource cronDatabase) throws SQLException {
        PgCron.unschedule(connection, cronDatabase, jobName(single(connection, "SELECT current_database()"), table));
        try (Statement statement = connection.createStatement()) {
            statement.execute(table.dropPurgeProcedure());
            statement.execute(table.dropTable());
        }
        commitIfNeeded(connection);
    }

    /**
     * Fails with the DDL when the table is missing, a column is missing or of another type, or the table predates
     * the fingerprint column or the FAILED state. The table is resolved as the statements resolve it (search_path), not in current_schema().
     */
    static void validate(Connection connection, PostgresTable table) throws SQLException {
        Map<String, String> found = columns(connection, table);
        if (found.isEmpty()) {
            throw new DedupConfigurationException("dedup table " + table.display() + " does not exist; build the"
                    + " store with PostgresDedupStore.builder(dataSource).createSchema(true) (or open the URI with"
                    + " createSchema=true), or run:\n" + table.createTable() + ";\n"
                    + table.createExpiryIndex() + ";");
        }
        StringBuilder differences = new StringBuilder();
        COLUMNS.forEach((column, type) -> {
            String actual = found.get(column);
            if (!type.equals(actual)) {
                differences.append("\n  ").append(column).append(": expected ").append(type).append(", found ")
                        .append(actual == null ? "no such column" : actual);
            }
        });
        String fingerprint = found.get(FINGERPRINT);
        if (fingerprint != null && !FINGERPRINT_TYPE.equals(fingerprint)) {
            differences.append("\n  ").append(FINGERPRINT).append(": expected ").append(FINGERPRINT_TYPE)
                    .append(", found ").append(fingerprint);
        }
        if (!differences.isEmpty()) {
            throw new DedupConfigurationException("dedup table " + table.display() + " has the wrong columns:"
                    + differences + "\nIt must be:\n" + table.createTable() + ";");
        }
        List<String> problems = new ArrayList<>();
        StringBuilder fix = new StringBuilder();
        if (fingerprint == null) {
            problems.add("it has no fingerprint column, so claims could not store payload fingerprints");
            fix.append(table.addFingerprint()).append(";\n");
        }
        List<String> outdated = stateChecksWithoutFailed(connection, table);
        if (!outdated.isEmpty()) {
            problems.add("it has a CHECK on state that does not allow 'FAILED', so fail() would be rejected");
            for (String ddl : table.allowFailed(outdated.get(0))) {
                fix.append(ddl).append(";\n");
            }
        }
        if (!problems.isEmpty()) {
            throw new DedupConfigurationException("dedup table " + table.display() + " was made by an earlier"
                    + " version: " + String.join("; ", problems) + ". Call PostgresDedupStore.createSchema(), which"
                    + " upgrades it, or run:\n" + fix);
        }
    }

    /** Column name to type; empty when the search_path does not lead to the table. */
    private static Map<String, String> columns(Connection connection, PostgresTable table) throws SQLException {
        Map<String, String> found = new LinkedHashMap<>();
        try (PreparedStatement query = connection.prepareStatement(table.describeColumns())) {
            query.setString(1, table.qualified);
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    found.put(rows.getString(1), rows.getString(2));
                }
            }
        }
        return found;
    }

    private static List<String> stateChecksWithoutFailed(Connection connection, PostgresTable table)
            throws SQLException {
        List<String> outdated = new ArrayList<>();
        try (PreparedStatement query = connection.prepareStatement(table.stateChecks())) {
            query.setString(1, table.qualified);
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    if (!rows.getString(2).contains("'FAILED'")) {
                        outdated.add(rows.getString(1));
                    }
                }
            }
        }
        return outdated;
    }

    private static String single(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(sql)) {
            return row.next() ? row.getString(1) : null;
        }
    }

    private static void commitIfNeeded(Connection connection) throws SQLException {
        if (!connection.getAutoCommit()) {
            connection.commit();
        }
    }
}
