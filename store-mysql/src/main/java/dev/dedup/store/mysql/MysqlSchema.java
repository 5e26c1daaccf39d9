package dev.dedup.store.mysql;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates and checks the dedup table, and schedules its purge as an event where the server runs events. */
final class MysqlSchema {
    private static final Logger log = LoggerFactory.getLogger(MysqlSchema.class);

    /** How often the event purges: often enough that expired rows do not pile up, rarely enough to cost nothing. */
    static final String EVENT_INTERVAL = "1 MINUTE";
    static final int PURGE_BATCH = 5_000;
    static final int PURGE_MAX_BATCHES = 100;
    static final String EVENT_SUFFIX = "_purge_event";

    /** Each column the statements rely on and its type as information_schema names it (bigint's width dropped). */
    private static final String[][] COLUMNS = {
        {"namespace", "varbinary(64)"}, {"key", "varbinary(512)"}, {"owner", "varbinary(64)"},
        {"state", "enum('IN_PROGRESS','COMPLETED','FAILED')"}, {"expires_us", "bigint"}, {"result", "mediumblob"},
        {"fingerprint", "varbinary(64)"}, {"created_us", "bigint"}, {"completed_us", "bigint"},
    };

    private static final String PRIMARY_KEY = "(namespace, key)";

    /** Tables whose scheduler warning was logged: once per table and process, not at every start of a store. */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private MysqlSchema() {}

    /**
     * Creates what is missing of the schema under a named lock, waiting at most {@code lockWaitSeconds} for it.
     *
     * @throws DedupStoreException (retryable) when another connection held the lock all that time
     */
    static MysqlSchemaReport create(Connection connection, MysqlTable table, String eventInterval,
            int lockWaitSeconds) throws SQLException {
        // Replicas that start together all create the schema: the named lock makes them take turns, so none drops
        // the procedure while another creates it. A session lock, released here or when the connection ends.
        return MysqlDdl.underLock(connection, "dedup-schema:" + table.name.display(), "createSchema of table "
                + table.name.display(), lockWaitSeconds, locked -> createLocked(locked, table, eventInterval));
    }

    private static MysqlSchemaReport createLocked(Connection connection, MysqlTable table, String eventInterval)
            throws SQLException {
        try (Statement statement = connection.createStatement()) {
            if (columns(connection, table).isEmpty()) {
                statement.execute(table.createTable());
            }
            validate(connection, table);
            statement.execute(table.dropPurgeProcedure());
            statement.execute(table.createPurgeProcedure());
        }
        String purge = table.callPurge(PURGE_BATCH, PURGE_MAX_BATCHES);
        String eventName = table.name.name() + EVENT_SUFFIX;
        Optional<String> problem;
        boolean created;
        try (Statement statement = connection.createStatement()) {
            statement.execute(table.createEvent(eventInterval));
            created = true;
            problem = MysqlDdl.eventProblem(connection, table.name, EVENT_SUFFIX, "purgeExpired");
        } catch (SQLException e) {
            created = false;
            problem = Optional.of("the purge event could not be created (" + e.getMessage() + "); grant the EVENT"
                    + " privilege, or schedule " + purge + " (or purgeExpired) yourself");
        }
        problem.ifPresent(why -> warnOnce(table, why));
        return new MysqlSchemaReport(table.name.display(), created, eventName, purge, problem);
    }

    /** {@link #validate}, then a warning (logged once) if the purge event exists but does not run. */
    static Void validateWithEvent(Connection connection, MysqlTable table) throws SQLException {
        validate(connection, table);
        MysqlDdl.disabledEvent(connection, table.name, EVENT_SUFFIX, "purgeExpired")
                .ifPresent(problem -> warnOnce(table, problem));
        return null;
    }

    private static void warnOnce(MysqlTable table, String problem) {
        if (WARNED.add(table.name.display())) {
            log.warn("dedup table {}: expired rows will not be purged on their own: {}", table.name.display(),
                    problem);
        }
    }

    /** {@return null, once the event, the procedure and the table are gone} */
    static Void drop(Connection connection, MysqlTable table) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(table.dropEvent());
            statement.execute(table.dropPurgeProcedure());
            statement.execute(table.dropTable());
        }
        return null;
    }

    /**
     * {@return null when the table is what the statements need; throws naming each difference if not} The columns
     * and their types; InnoDB (row locks, transactions); the primary key on (namespace, key), in that order, which the
     * claim's duplicate check is; and no AUTO_INCREMENT column, whose id would replace the claim's insert id (the
     * expiry it reads back).
     */
    static Void validate(Connection connection, MysqlTable table) throws SQLException {
        Map<String, String[]> found = columns(connection, table);
        if (found.isEmpty()) {
            throw new DedupConfigurationException("dedup table " + table.name.display() + " does not exist"
                    + (table.name.qualifier() == null ? " in the connection's database" : "")
                    + "; create it with MysqlDedupStore.createSchema() or this DDL:\n" + table.createTable() + ";");
        }
        StringBuilder differences = new StringBuilder();
        for (String[] column : COLUMNS) {
            String[] actual = found.get(column[0]);
            if (actual == null) {
                differences.append("\n  missing column ").append(column[0]).append(' ').append(column[1]);
            } else if (!actual[0].equals(column[1])) {
                differences.append("\n  column ").append(column[0]).append(" is ").append(actual[0])
                        .append(", expected ").append(column[1]);
            }
        }
        found.forEach((column, typeAndExtra) -> {
            if (typeAndExtra[1].contains("auto_increment")) {
                differences.append("\n  column ").append(column).append(" is AUTO_INCREMENT, which no column may be"
                        + " (its id would replace the claim's insert id)");
            }
        });
        try (PreparedStatement query = describe(connection, table, table.describeTable());
                ResultSet row = query.executeQuery()) {
            row.next();
            String engine = row.getString(1);
            if (!"InnoDB".equalsIgnoreCase(engine)) {
                differences.append("\n  engine is ").append(engine).append(", expected InnoDB");
            }
            String primaryKey = row.getString(2) == null ? "none" : "(" + row.getString(2).replace(",", ", ") + ")";
            if (!primaryKey.equalsIgnoreCase(PRIMARY_KEY)) {
                differences.append("\n  primary key is ").append(primaryKey).append(", expected ").append(PRIMARY_KEY);
            }
        }
        if (!differences.isEmpty()) {
            throw new DedupConfigurationException("dedup table " + table.name.display() + " is not as the store needs:"
                    + differences + "\nIt must be:\n" + table.createTable() + ";");
        }
        return null;
    }

    /** Column name (lower case) to type and extra, bigint without its display width (MariaDB shows bigint(20)). */
    private static Map<String, String[]> columns(Connection connection, MysqlTable table) throws SQLException {
        Map<String, String[]> found = new LinkedHashMap<>();
        try (PreparedStatement query = describe(connection, table, table.describeColumns());
                ResultSet rows = query.executeQuery()) {
            while (rows.next()) {
                found.put(rows.getString(1).toLowerCase(Locale.ROOT), new String[] {
                    rows.getString(2).replaceAll("^bigint\\(\\d+\\)", "bigint"),
                    rows.getString(3).toLowerCase(Locale.ROOT)});
            }
        }
        return found;
    }

    /** An information_schema query about the table, its parameters bound: the database if named, the table. */
    private static PreparedStatement describe(Connection connection, MysqlTable table, String sql)
            throws SQLException {
        PreparedStatement query = connection.prepareStatement(sql);
        int parameter = 1;
        if (table.name.qualifier() != null) {
            query.setString(parameter++, table.name.qualifier());
        }
        query.setString(parameter, table.name.name());
        return query;
    }
}
