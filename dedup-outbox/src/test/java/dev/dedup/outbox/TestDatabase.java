package dev.dedup.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.tck.TestServers;

/**
 * The databases the outbox tests run on, with the few SQL spellings the tests' own statements need on each. MySQL 8
 * does not run here: MariaDB stands for the MySQL dialect, and the test names say MariaDB.
 */
enum TestDatabase {
    POSTGRESQL("PostgreSQL 15 with pg_cron", "DEDUP_TEST_POSTGRES_URL"),
    MARIADB("MariaDB 10.11", "DEDUP_TEST_MARIADB_URL");

    private final String server;
    private final String variable;

    TestDatabase(String server, String variable) {
        this.server = server;
        this.variable = variable;
    }

    /** The server's JDBC URL, with credentials; a missing one fails under CI. */
    String jdbcUrl() {
        return TestServers.require(server, variable, null);
    }

    HikariDataSource pool(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(5_000);
        return new HikariDataSource(config);
    }

    /** The {@code key} column, a reserved word on MySQL. */
    String key() {
        return this == POSTGRESQL ? "key" : "`key`";
    }

    /** The server's clock, in the zone the outbox writes its times in. */
    String now() {
        return this == POSTGRESQL ? "now()" : "UTC_TIMESTAMP(6)";
    }

    /** The server's clock {@code minutes} ago. */
    String minutesAgo(int minutes) {
        return this == POSTGRESQL ? "now() - interval '" + minutes + " minutes'"
                : "UTC_TIMESTAMP(6) - INTERVAL " + minutes + " MINUTE";
    }

    /** A header's value, read with SQL as a user inspecting the table would. */
    String header(String name) {
        return this == POSTGRESQL ? "headers ->> '" + name + "'" : "JSON_VALUE(headers, '$." + name + "')";
    }

    /** A message id as a statement's parameter. */
    String messageIdParameter() {
        return this == POSTGRESQL ? "?::uuid" : "?";
    }

    /** The outbox table as a version before parking made it (on MySQL: as a user might have, by hand). */
    String tableBeforeParking(String table) {
        return this == POSTGRESQL ? "CREATE TABLE " + table + " (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                + " message_id uuid NOT NULL, destination text NOT NULL, key text, payload bytea NOT NULL,"
                + " headers jsonb NOT NULL DEFAULT '{}', created_at timestamptz NOT NULL DEFAULT"
                + " statement_timestamp(), published_at timestamptz)"
                : "CREATE TABLE " + table + " (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, message_id CHAR(36)"
                + " CHARACTER SET ascii NOT NULL, destination TEXT NOT NULL, `key` TEXT, payload LONGBLOB NOT NULL,"
                + " headers JSON NOT NULL, created_at DATETIME(6) NOT NULL, published_at DATETIME(6)) ENGINE=InnoDB";
    }
}
