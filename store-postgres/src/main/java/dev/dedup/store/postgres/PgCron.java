package dev.dedup.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Schedules and removes pg_cron jobs the way the store schedules its purge: in the table's database when pg_cron
 * lives there, through {@code cron.schedule_in_database} from the database named by {@code cron.database_name}
 * otherwise, and, when neither is possible, a reason instead of an error (the job is a convenience; the caller can
 * run the command itself).
 */
public final class PgCron {
    private PgCron() {}

    /**
     * Schedules {@code command} as job {@code jobName}; scheduling again under the same name updates the job.
     *
     * @param connection a connection to the database the command runs in
     * @param cronDatabase connections to the database where pg_cron is installed, or null when it is the same
     * @param jobName the job's name, unique per table
     * @param schedule the cron schedule, such as {@code "* * * * *"}
     * @param command the SQL the job runs
     * @return empty when the job is scheduled; otherwise why it could not be
     * @throws SQLException when a statement fails
     */
    public static Optional<String> schedule(Connection connection, DataSource cronDatabase, String jobName,
            String schedule, String command) throws SQLException {
        if (hasPgCron(connection)) {
            try (PreparedStatement statement = connection.prepareStatement("SELECT cron.schedule(?, ?, ?)")) {
                statement.setString(1, jobName);
                statement.setString(2, schedule);
                statement.setString(3, command);
                statement.execute();
            }
            return Optional.empty();
        }
        String database = single(connection, "SELECT current_database()");
        String cronDatabaseName = single(connection, "SELECT current_setting('cron.database_name', true)");
        if (cronDatabaseName == null || cronDatabaseName.isEmpty()) {
            return Optional.of("pg_cron is not loaded on this server (add pg_cron to shared_preload_libraries,"
                    + " restart, and CREATE EXTENSION pg_cron)");
        }
        if (cronDatabaseName.equals(database)) {
            return Optional.of("pg_cron is loaded but its extension is not created: run CREATE EXTENSION pg_cron in"
                    + " database " + database);
        }
        if (cronDatabase == null) {
            return Optional.of("pg_cron lives in database " + cronDatabaseName + ", not " + database
                    + "; pass a DataSource for " + cronDatabaseName + " to createSchema(cronDatabase)");
        }
        try (Connection cron = cronDatabase.getConnection()) {
            if (!hasPgCron(cron)) {
                return Optional.of("the cron DataSource does not reach a database with the pg_cron extension"
                        + " (expected database " + cronDatabaseName + ")");
            }
            try (PreparedStatement statement = cron.prepareStatement(
                    "SELECT cron.schedule_in_database(?, ?, ?, ?)")) {
                statement.setString(1, jobName);
                statement.setString(2, schedule);
                statement.setString(3, command);
                statement.setString(4, database);
                statement.execute();
            }
            commitIfNeeded(cron);
        }
        return Optional.empty();
    }

    /**
     * Removes job {@code jobName} where pg_cron is reachable; a job that does not exist is no error.
     *
     * @param connection a connection to the database the command runs in
     * @param cronDatabase connections to the database where pg_cron is installed, or null when it is the same
     * @param jobName the job's name
     * @throws SQLException when a statement fails
     */
    public static void unschedule(Connection connection, DataSource cronDatabase, String jobName)
            throws SQLException {
        if (hasPgCron(connection)) {
            unscheduleHere(connection, jobName);
        } else if (cronDatabase != null) {
            try (Connection cron = cronDatabase.getConnection()) {
                unscheduleHere(cron, jobName);
                commitIfNeeded(cron);
            }
        }
    }

    private static void unscheduleHere(Connection connection, String jobName) throws SQLException {
        // cron.unschedule fails on an unknown name: look first, so removing twice is harmless.
        try (PreparedStatement unschedule = connection.prepareStatement(
                "SELECT cron.unschedule(jobid) FROM cron.job WHERE jobname = ?")) {
            unschedule.setString(1, jobName);
            unschedule.execute();
        }
    }

    private static boolean hasPgCron(Connection connection) throws SQLException {
        return single(connection, "SELECT extname FROM pg_extension WHERE extname = 'pg_cron'") != null;
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
