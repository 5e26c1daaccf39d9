package dev.dedup.outbox;

import dev.dedup.DedupConfigurationException;
import dev.dedup.jdbc.TableName;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The databases the outbox runs on. An outbox finds its database from its first connection's metadata, unless
 * {@link Outbox.Builder#database} names it.
 */
public enum OutboxDatabase {
    /** PostgreSQL 11 and later: pg_cron purges, LISTEN/NOTIFY can wake the relays. */
    POSTGRESQL,
    /**
     * MySQL 8 and MariaDB 10.6 and later, the first versions with {@code FOR UPDATE SKIP LOCKED}, on InnoDB: an
     * {@code EVENT} purges. Tested on MariaDB 10.11 only.
     */
    MYSQL;

    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)");

    OutboxDialect dialect(TableName table) {
        return this == POSTGRESQL ? new PostgresOutboxDialect(table) : new MysqlOutboxDialect(table);
    }

    /** The word for a table's qualifier on this database, in messages. */
    String qualifierWord() {
        return this == POSTGRESQL ? "schema" : "database";
    }

    /**
     * The database {@code connection} reaches, from its metadata (the drivers answer without a round trip).
     *
     * @throws DedupConfigurationException naming the server when it is another database, or a MySQL or MariaDB
     *     without {@code SKIP LOCKED}
     */
    static OutboxDatabase of(Connection connection) throws SQLException {
        DatabaseMetaData metadata = connection.getMetaData();
        String product = metadata.getDatabaseProductName();
        String version = metadata.getDatabaseProductVersion();
        String lower = product.toLowerCase(Locale.ROOT);
        if (lower.equals("postgresql")) {
            return POSTGRESQL;
        }
        if (lower.equals("mysql") || lower.equals("mariadb")) {
            // MySQL Connector/J names a MariaDB server MySQL; MariaDB 10 reports itself as 5.5.5-10.x to such clients.
            boolean mariaDb = lower.equals("mariadb") || version.contains("MariaDB");
            Matcher number = VERSION.matcher(version.startsWith("5.5.5-") ? version.substring(6) : version);
            boolean found = number.find();
            int major = found ? Integer.parseInt(number.group(1)) : metadata.getDatabaseMajorVersion();
            int minor = found ? Integer.parseInt(number.group(2)) : metadata.getDatabaseMinorVersion();
            boolean skipLocked = mariaDb ? major > 10 || major == 10 && minor >= 6 : major >= 8;
            if (skipLocked) {
                return MYSQL;
            }
            throw new DedupConfigurationException("the outbox needs FOR UPDATE SKIP LOCKED, in MySQL 8 and MariaDB"
                    + " 10.6 and later, but the server is " + product + " " + version);
        }
        throw new DedupConfigurationException("the outbox runs on PostgreSQL, MySQL 8 and MariaDB 10.6 and later, but"
                + " the DataSource reaches " + product + " " + version);
    }
}
