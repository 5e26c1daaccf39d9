package dev.dedup.store.mysql;

import dev.dedup.DedupLimits;
import dev.dedup.jdbc.TableName;
import java.util.Collections;

/**
 * The dedup table's name, checked as a plain SQL identifier ({@code table} or {@code database.table}) when the store
 * is built, so it can be placed in SQL text safely, and every statement the store runs on it.
 *
 * <p>Keys and namespaces are {@code VARBINARY}, bound as UTF-8 bytes: compared byte for byte whatever the server's
 * or connection's character set and collation, so "Key" and "key", or a composed and a decomposed é, are different
 * keys. A key of {@link DedupLimits#MAX_KEY_BYTES} bytes and a namespace of 64 make a primary key of 576 bytes, well
 * inside InnoDB's 3072-byte index limit. Times are integer microseconds since the epoch on the server's clock
 * ({@link #NOW_US}), so neither the session's time zone nor the application servers' clocks matter.
 */
final class MysqlTable {
    private static final char QUOTE = '`';

    static final String DEFAULT_NAME = "dedup_claims";

    /**
     * The server's clock in microseconds since the epoch, fixed for one statement. UTC_TIMESTAMP is read without a
     * time zone conversion, so a daylight-saving change in the session's zone cannot repeat or skip an hour.
     */
    static final String NOW_US = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";

    /** The columns every read returns, in this order. */
    private static final String RECORD = "`owner`, `state`, `expires_us`, `result`, `fingerprint`";

    /** The name as configured, {@code table} or {@code database.table}. */
    final TableName name;
    /** Quoted, database-qualified when a database was given: safe to splice into SQL. */
    final String qualified;

    /** Parses {@code table} or {@code database.table}; anything else is a configuration error naming the rule. */
    static MysqlTable parse(String table) {
        return new MysqlTable(TableName.parse(table, "database"));
    }

    private MysqlTable(TableName name) {
        this.name = name;
        this.qualified = name.quoted(QUOTE);
    }

    // ----- DDL --------------------------------------------------------------------------------------------------

    String createTable() {
        return "CREATE TABLE IF NOT EXISTS " + qualified + " (\n"
                + "    `namespace`    VARBINARY(64)  NOT NULL,\n"
                + "    `key`          VARBINARY(" + DedupLimits.MAX_KEY_BYTES + ") NOT NULL,\n"
                + "    `owner`        VARBINARY(64)  NOT NULL,\n"
                + "    `state`        ENUM('IN_PROGRESS', 'COMPLETED', 'FAILED') NOT NULL,\n"
                + "    `expires_us`   BIGINT         NOT NULL,\n"
                + "    `result`       MEDIUMBLOB,\n"
                + "    `fingerprint`  VARBINARY(" + DedupLimits.MAX_FINGERPRINT_BYTES + "),\n"
                + "    `created_us`   BIGINT         NOT NULL,\n"
                + "    `completed_us` BIGINT,\n"
                + "    PRIMARY KEY (`namespace`, `key`),\n"
                + "    KEY " + "`" + name.name() + "_expires_us`" + " (`expires_us`)\n"
                + ") ENGINE=InnoDB";
    }

    String dropTable() {
        return "DROP TABLE IF EXISTS " + qualified;
    }

    String createPurgeProcedure() {
        return "CREATE PROCEDURE " + name.derived("_purge", QUOTE) + "(IN batch_size INT, IN max_batches INT)\n"
                + "BEGIN\n"
                + "    DECLARE batches INT DEFAULT 0;\n"
                + "    DECLARE deleted INT DEFAULT batch_size;\n"
                + "    WHILE deleted >= batch_size AND batches < max_batches DO\n"
                + "        " + purgeBatch("batch_size") + ";\n"
                + "        SET deleted = ROW_COUNT();\n"
                + "        SET batches = batches + 1;\n"
                + "    END WHILE;\n"
                + "END";
    }

    String dropPurgeProcedure() {
        return "DROP PROCEDURE IF EXISTS " + name.derived("_purge", QUOTE);
    }

    /**
     * The event that runs the purge every {@code interval}; the event scheduler must be on for it to run. Each
     * batch is its own statement, so a large backlog never holds its locks for long.
     */
    String createEvent(String interval) {
        return "CREATE EVENT IF NOT EXISTS " + name.derived("_purge_event", QUOTE) + " ON SCHEDULE EVERY " + interval
                + " DO " + callPurge(MysqlSchema.PURGE_BATCH, MysqlSchema.PURGE_MAX_BATCHES);
    }

    String dropEvent() {
        return "DROP EVENT IF EXISTS " + name.derived("_purge_event", QUOTE);
    }

    String callPurge(int batchSize, int maxBatches) {
        return "CALL " + name.derived("_purge", QUOTE) + "(" + batchSize + ", " + maxBatches + ")";
    }

    /**
     * One bounded batch of the purge, oldest expiry first through the expiry index; {@code limit} is a parameter
     * marker or a variable. A row a claim is taking over meanwhile waits for that claim and is then no longer expired.
     */
    String purgeBatch(String limit) {
        return "DELETE FROM " + qualified + " WHERE `expires_us` <= " + NOW_US + " ORDER BY `expires_us` LIMIT "
                + limit;
    }

    // ----- the claim ----------------------------------------------------------------------------------------------

    /**
     * The claim in one statement: insert the key; on a duplicate, take the row over only if it has expired, every
     * assignment conditional on the old expiry, which is assigned last (MySQL assigns left to right, so the
     * condition must see the old value). The row lock InnoDB takes on the duplicate makes racers for one expired
     * row queue, and each sees the row the one before it left: exactly one takes it over.
     *
     * <p>Whether this caller won comes back in the reply itself, as the insert id: the new expiry when the row was
     * inserted or taken over ({@code LAST_INSERT_ID(expr)}), 0 when a live row kept its owner (its branch resets it
     * with {@code LAST_INSERT_ID(0)}). The affected-rows count cannot tell that alone: with the drivers' default
     * CLIENT_FOUND_ROWS an unchanged row also counts 1. Parameters: namespace, key, owner, lease in µs, fingerprint.
     */
    String claim() {
        return "INSERT INTO " + qualified + " (" + INSERT_COLUMNS + ") VALUES (?, ?, ?, 'IN_PROGRESS', LAST_INSERT_ID("
                + NOW_US + " + ?), " + NOW_US + ", ?)" + takeOverExpired("LAST_INSERT_ID(VALUES(`expires_us`))",
                        " + LAST_INSERT_ID(0)");
    }

    /**
     * {@link #claim()} for {@code rows} distinct keys in one statement, their rows sorted by key by the caller so
     * that two batches lock their common keys in the same order. Which rows this batch won is read back by owner
     * ({@link #readMany}): one insert id cannot say it per row. Parameters per row: namespace, key, owner, lease in
     * µs, fingerprint.
     */
    String claimMany(int rows) {
        String row = "(?, ?, ?, 'IN_PROGRESS', " + NOW_US + " + ?, " + NOW_US + ", ?)";
        return "INSERT INTO " + qualified + " (" + INSERT_COLUMNS + ") VALUES "
                + String.join(", ", Collections.nCopies(rows, row)) + takeOverExpired("VALUES(`expires_us`)", "");
    }

    private static final String INSERT_COLUMNS =
            "`namespace`, `key`, `owner`, `state`, `expires_us`, `created_us`, `fingerprint`";

    /** The take-over of an expired duplicate; a live one keeps every value ({@code keptExpiry} adds nothing). */
    private static String takeOverExpired(String newExpiry, String keptExpiry) {
        String expired = "`expires_us` <= " + NOW_US;
        return " ON DUPLICATE KEY UPDATE"
                + " `owner` = IF(" + expired + ", VALUES(`owner`), `owner`),"
                + " `state` = IF(" + expired + ", 'IN_PROGRESS', `state`),"
                + " `result` = IF(" + expired + ", NULL, `result`),"
                + " `fingerprint` = IF(" + expired + ", VALUES(`fingerprint`), `fingerprint`),"
                + " `created_us` = IF(" + expired + ", VALUES(`created_us`), `created_us`),"
                + " `completed_us` = IF(" + expired + ", NULL, `completed_us`),"
                + " `expires_us` = IF(" + expired + ", " + newExpiry + ", `expires_us`" + keptExpiry + ")";
    }

    /**
     * The row a claim met, read after the claim statement, with whether it is still live. A locking read, so it sees
     * the latest committed row even inside a caller's REPEATABLE READ transaction whose snapshot is older; the
     * claim statement already holds that lock there. Parameters: namespace, key.
     */
    String readOne() {
        return "SELECT " + RECORD + ", `expires_us` > " + NOW_US + " AS `live` FROM " + qualified
                + " WHERE `namespace` = ? AND `key` = ? LOCK IN SHARE MODE";
    }

    /** {@link #readOne()} for {@code keys} keys, each row with its key. Parameters: namespace, then the keys. */
    String readMany(int keys) {
        return "SELECT `key`, " + RECORD + ", `expires_us` > " + NOW_US + " AS `live` FROM " + qualified
                + " WHERE `namespace` = ? AND `key` IN (" + String.join(", ", Collections.nCopies(keys, "?"))
                + ") LOCK IN SHARE MODE";
    }

    // ----- settling ---------------------------------------------------------------------------------------------

    /**
     * Ends the record in COMPLETED or FAILED, kept {@code retention} from now with the result; the owner and the
     * fingerprint stay. Parameters: state, retention in µs, result, namespace, key, owner. With {@code leaseClock}
     * false (inside the claiming transaction) the expiry is not checked: see {@link #heldBy}.
     */
    String finish(boolean leaseClock) {
        return "UPDATE " + qualified + " SET `state` = ?, `expires_us` = " + NOW_US + " + ?, `result` = ?,"
                + " `completed_us` = " + NOW_US + " WHERE `namespace` = ? AND `key` = ? AND " + heldBy(leaseClock);
    }

    /** Parameters: namespace, key, owner. */
    String release(boolean leaseClock) {
        return "DELETE FROM " + qualified + " WHERE `namespace` = ? AND `key` = ? AND " + heldBy(leaseClock);
    }

    /** Parameters: lease in µs, namespace, key, owner. */
    String extend(boolean leaseClock) {
        return "UPDATE " + qualified + " SET `expires_us` = " + NOW_US + " + ?"
                + " WHERE `namespace` = ? AND `key` = ? AND " + heldBy(leaseClock);
    }

    /**
     * The record is still the owner's claim. On a pooled connection its lease must not have run out, since another
     * consumer may take the row over after that. Inside the transaction that claimed it nobody can (the row lock
     * keeps them out), so there the lease clock does not matter.
     */
    private static String heldBy(boolean leaseClock) {
        return "`owner` = ? AND `state` = 'IN_PROGRESS'" + (leaseClock ? " AND `expires_us` > " + NOW_US : "");
    }

    /**
     * A DELETE that never touches a row, nor locks one (its WHERE is false): run twice as a batch, it shows whether
     * the driver reports each statement's row count. Parameter: namespace.
     */
    String deleteNothing() {
        return "DELETE FROM " + qualified + " WHERE `namespace` = ? AND 1 = 0";
    }

    /** The state of the record if its owner holds or held it: how a retry learns what a lost reply did. */
    String stateOfOwner() {
        return "SELECT `state` FROM " + qualified + " WHERE `namespace` = ? AND `key` = ? AND `owner` = ?";
    }

    // ----- operator reads and deletes ---------------------------------------------------------------------------

    /** The live row as it is, a plain read that takes no lock. Parameters: namespace, key. */
    String inspect() {
        return "SELECT " + RECORD + " FROM " + qualified + " WHERE `namespace` = ? AND `key` = ? AND `expires_us` > "
                + NOW_US;
    }

    /**
     * The operator's delete of the live row. An expired row is left to the purge: it does not count either way.
     * Parameters: namespace, key.
     */
    String forget() {
        return "DELETE FROM " + qualified + " WHERE `namespace` = ? AND `key` = ? AND `expires_us` > " + NOW_US;
    }

    // ----- schema checks ----------------------------------------------------------------------------------------

    /**
     * The table's columns, their types and extras ({@code auto_increment}), in the named database or the
     * connection's current one. Parameters: the database if named, the table.
     */
    String describeColumns() {
        return "SELECT COLUMN_NAME, COLUMN_TYPE, EXTRA FROM information_schema.COLUMNS WHERE " + thisTable();
    }

    /** The table's engine and its primary key's columns in order, comma-separated. Parameters as describeColumns. */
    String describeTable() {
        return "SELECT ENGINE, (SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS"
                + " s WHERE s.TABLE_SCHEMA = t.TABLE_SCHEMA AND s.TABLE_NAME = t.TABLE_NAME AND s.INDEX_NAME = 'PRIMARY')"
                + " FROM information_schema.TABLES t WHERE " + thisTable();
    }

    private String thisTable() {
        return "TABLE_SCHEMA = " + (name.qualifier() == null ? "DATABASE()" : "?") + " AND TABLE_NAME = ?";
    }

}
