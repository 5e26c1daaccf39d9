package dev.dedup.store.mysql;

import dev.dedup.DedupStoreException;
import dev.dedup.jdbc.Connections;
import dev.dedup.jdbc.TableName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;

/**
 * What modules that build tables next to the store's (the outbox) share with its schema code: the named lock that
 * replicas creating a schema take turns under, and whether a table's purge {@code EVENT} will run. Internal plumbing
 * of dedup's modules, as {@code PgCron} is on PostgreSQL.
 */
public final class MysqlDdl {
    private MysqlDdl() {}

    /**
     * Runs {@code work} under the named lock {@code lockName} ({@code GET_LOCK} on a hash of it, so any length fits
     * the server's 64 characters), released afterwards, or with the connection if it breaks.
     *
     * @param <T> what the work returns
     * @param connection the connection to lock and work on
     * @param lockName the lock, such as {@code "dedup-schema:" + table}
     * @param what the operation, for the message: {@code "createSchema of table t"}
     * @param waitSeconds how long to wait for another connection to release it
     * @param work the statements to run while holding it
     * @return what the work returned
     * @throws DedupStoreException (retryable) when another connection held the lock all that time
     * @throws SQLException when a statement fails
     */
    public static <T> T underLock(Connection connection, String lockName, String what, int waitSeconds,
            Connections.Work<T> work) throws SQLException {
        try (PreparedStatement lock = connection.prepareStatement(
                "SELECT GET_LOCK(CONCAT('dedup-schema:', LEFT(SHA1(?), 40)), ?)")) {
            lock.setString(1, lockName);
            lock.setInt(2, waitSeconds);
            try (ResultSet obtained = lock.executeQuery()) {
                if (!obtained.next() || obtained.getInt(1) != 1) {
                    throw new DedupStoreException(what + " waited " + waitSeconds + " s for the lock another"
                            + " connection holds while it creates the same schema (the named lock 'dedup-schema:' +"
                            + " SHA1('" + lockName + "')); retry", null, true);
                }
            }
        }
        try {
            return work.run(connection);
        } finally {
            try (PreparedStatement unlock = connection.prepareStatement(
                    "SELECT RELEASE_LOCK(CONCAT('dedup-schema:', LEFT(SHA1(?), 40)))")) {
                unlock.setString(1, lockName);
                unlock.execute();
            }
        }
    }

    /**
     * Why the event {@code <table><suffix>} will not purge on its own: the server's event scheduler is off, or the
     * event exists but is DISABLED (or SLAVESIDE_DISABLED, a replica's copy, which runs only if the server is
     * promoted and the event enabled), or both.
     *
     * @param connection a connection to the table's server
     * @param table the table the event belongs to; its database, when named, is the event's
     * @param suffix appended to the table's name to name the event, such as {@code "_purge_event"}
     * @param instead what to schedule instead, for the message, such as {@code "purgeExpired"}
     * @return empty when the event will run (or does not exist and the scheduler is on)
     * @throws SQLException when a statement fails
     */
    public static Optional<String> eventProblem(Connection connection, TableName table, String suffix,
            String instead) throws SQLException {
        Optional<String> scheduler = schedulerProblem(connection, instead);
        Optional<String> event = disabledEvent(connection, table, suffix, instead);
        return scheduler.isPresent() && event.isPresent() ? Optional.of(scheduler.get() + "; and " + event.get())
                : scheduler.or(() -> event);
    }

    private static Optional<String> schedulerProblem(Connection connection, String instead) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery("SELECT @@GLOBAL.event_scheduler")) {
            String scheduler = row.next() ? row.getString(1) : null;
            if ("ON".equalsIgnoreCase(scheduler) || "1".equals(scheduler)) {
                return Optional.empty();
            }
            return Optional.of("the server's event scheduler is " + scheduler + ", so the purge event does not run:"
                    + " SET GLOBAL event_scheduler = ON (and event_scheduler=ON in the server's configuration), or"
                    + " schedule " + instead + " yourself");
        }
    }

    /**
     * As {@link #eventProblem} for the event alone, whatever the scheduler.
     *
     * @param connection a connection to the table's server
     * @param table the table the event belongs to
     * @param suffix appended to the table's name to name the event
     * @param instead what to schedule instead, for the message
     * @return empty when the event is ENABLED or absent
     * @throws SQLException when a statement fails
     */
    public static Optional<String> disabledEvent(Connection connection, TableName table, String suffix,
            String instead) throws SQLException {
        String event = table.name() + suffix;
        try (PreparedStatement query = connection.prepareStatement("SELECT STATUS FROM information_schema.EVENTS"
                + " WHERE EVENT_SCHEMA = " + (table.qualifier() == null ? "DATABASE()" : "?") + " AND EVENT_NAME = ?")) {
            int parameter = 1;
            if (table.qualifier() != null) {
                query.setString(parameter++, table.qualifier());
            }
            query.setString(parameter, event);
            try (ResultSet row = query.executeQuery()) {
                if (!row.next() || "ENABLED".equalsIgnoreCase(row.getString(1))) {
                    return Optional.empty();
                }
                return Optional.of("the purge event " + event + " is " + row.getString(1) + ", so it does not run:"
                        + " ALTER EVENT " + table.derived(suffix, '`') + " ENABLE, or schedule " + instead
                        + " yourself");
            }
        }
    }
}
