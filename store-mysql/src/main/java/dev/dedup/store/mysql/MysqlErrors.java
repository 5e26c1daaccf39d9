package dev.dedup.store.mysql;

import dev.dedup.DedupConfigurationException;
import dev.dedup.jdbc.SqlErrors;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

/**
 * What MySQL's and MariaDB's SQLStates and error codes mean to the store; the message and the unwrapping are
 * {@link SqlErrors}'. The codes are the server's, the same through MariaDB Connector/J and MySQL Connector/J.
 */
final class MysqlErrors extends SqlErrors {
    /** ER_LOCK_DEADLOCK: InnoDB rolled the transaction back to break a deadlock. */
    static final int DEADLOCK = 1213;
    /** ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout passed; only the statement was rolled back. */
    static final int LOCK_WAIT_TIMEOUT = 1205;

    /**
     * Worth another try: deadlock and lock waits, a statement killed by its timeout (1317 MySQL and MariaDB, 3024
     * MySQL's max_execution_time, 1969 MariaDB's max_statement_time), a server that is read-only for a failover
     * (1290 MySQL, 1836 MariaDB) or out of connections (1040).
     */
    private static final Set<Integer> RETRYABLE_CODES = Set.of(DEADLOCK, LOCK_WAIT_TIMEOUT, 1317, 3024, 1969, 1290,
            1836, 1040);
    /** The same connect fails until the configuration changes: access denied (1044, 1045), unknown database (1049). */
    private static final Set<Integer> CONFIGURATION_CODES = Set.of(1044, 1045, 1049);

    private final MysqlTable table;

    MysqlErrors(MysqlTable table, String location) {
        super("MySQL dedup store", location);
        this.table = table;
    }

    @Override
    protected DedupConfigurationException schemaProblem(SQLException root) {
        int code = root.getErrorCode();
        // 1146 no such table, 1054 unknown column: the schema was never created, or by another tool.
        if (code == 1146 || code == 1054) {
            return new DedupConfigurationException("table " + table.name.display() + " is missing or lacks columns"
                    + " (error " + code + "); create it with MysqlDedupStore.createSchema() or this DDL:\n" + table.createTable()
                    + ";", root);
        }
        // 1406 data too long, 1265 data truncated, 1366 incorrect value: a column narrower than the store's limits.
        if (code == 1406 || code == 1265 || code == 1366) {
            return new DedupConfigurationException("table " + table.name.display() + " rejected a value (error " + code
                    + "): a column is narrower than dedup's limits; it must be:\n" + table.createTable() + ";", root);
        }
        return null;
    }

    /** {@return whether a rerun of the statement may get through: a deadlock or a lock wait that timed out} */
    static boolean isContention(SQLException e) {
        SQLException root = rootOf(e);
        return root.getErrorCode() == DEADLOCK || root.getErrorCode() == LOCK_WAIT_TIMEOUT
                || stateOf(root).equals("40001");
    }

    /** A connect failure that a later attempt may not meet: the server is down, starting, or out of connections. */
    static boolean worthReconnecting(SQLException e) {
        SQLException root = rootOf(e);
        return stateOf(root).startsWith("08") && !CONFIGURATION_CODES.contains(root.getErrorCode());
    }

    @Override
    protected boolean isRetryable(SQLException e) {
        String state = stateOf(e);
        if (state.startsWith("28") || CONFIGURATION_CODES.contains(e.getErrorCode())) {
            return false;
        }
        return e instanceof SQLTransientException || e instanceof SQLRecoverableException
                || e instanceof SQLNonTransientConnectionException
                || RETRYABLE_CODES.contains(e.getErrorCode())
                || state.isEmpty()
                || state.startsWith("08") // connection exception
                || state.startsWith("40") // deadlock, serialization failure
                || state.equals("70100"); // query interrupted: the statement's timeout
    }
}
