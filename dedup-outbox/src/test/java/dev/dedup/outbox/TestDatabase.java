package dev.dedup.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupStore;
import dev.dedup.store.mysql.MysqlDedupStore;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.TestServers;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Function;
import javax.sql.DataSource;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

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

    /** A data source without a pool, for the chaos test's processes: a connection per cycle, as a killed one drops. */
    DataSource unpooled(String jdbcUrl) throws SQLException {
        if (this == POSTGRESQL) {
            PGSimpleDataSource database = new PGSimpleDataSource();
            database.setUrl(jdbcUrl);
            return database;
        }
        return new MariaDbDataSource(jdbcUrl);
    }

    /** The inbox on this database's dedup store, as the transactional view of a connection. */
    Function<Connection, DedupStore> inbox(DataSource dataSource, String table) {
        if (this == POSTGRESQL) {
            return PostgresDedupStore.builder(dataSource).table(table).namespace("orders").build()::inTransaction;
        }
        return MysqlDedupStore.builder(dataSource).table(table).namespace("orders").build()::inTransaction;
    }

    /** Creates the inbox's table; {@return what drops it} */
    Runnable createInbox(DataSource dataSource, String table) {
        if (this == POSTGRESQL) {
            return PostgresDedupStore.builder(dataSource).table(table).namespace("orders").createSchema(true)
                    .build()::dropSchema;
        }
        return MysqlDedupStore.builder(dataSource).table(table).namespace("orders").createSchema(true)
                .build()::dropSchema;
    }

    /**
     * The statements that make the consumer's effect table {@code schema.applied} in a schema (a database on MySQL)
     * of its own: one row per order, how often it was applied, and {@code seq}, the order of the first applications.
     */
    String[] createApplied(String schema) {
        return this == POSTGRESQL ? new String[] {"CREATE SCHEMA " + schema, "CREATE TABLE " + schema + ".applied"
                + " (order_no int PRIMARY KEY, sku text NOT NULL, message_id text NOT NULL, applied int NOT NULL,"
                + " seq bigserial)"}
                : new String[] {"CREATE DATABASE " + schema, "CREATE TABLE " + schema + ".applied (order_no INT"
                + " PRIMARY KEY, sku VARCHAR(64) NOT NULL, message_id CHAR(36) NOT NULL, applied INT NOT NULL, seq"
                + " BIGINT NOT NULL AUTO_INCREMENT UNIQUE) ENGINE=InnoDB"};
    }

    String dropSchema(String schema) {
        return this == POSTGRESQL ? "DROP SCHEMA IF EXISTS " + schema + " CASCADE" : "DROP DATABASE IF EXISTS " + schema;
    }

    /** Applies an order: a row with applied = 1, or applied + 1 when it was applied before. */
    String applyOrder(String applied) {
        return this == POSTGRESQL ? "INSERT INTO " + applied + " AS effect (order_no, sku, message_id, applied) VALUES"
                + " (?, ?, ?, 1) ON CONFLICT (order_no) DO UPDATE SET applied = effect.applied + 1"
                : "INSERT INTO " + applied + " (order_no, sku, message_id, applied) VALUES (?, ?, ?, 1)"
                + " ON DUPLICATE KEY UPDATE applied = applied + 1";
    }
}
