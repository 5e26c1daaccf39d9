package dev.dedup.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Where a SQL store's statements run: a pooled connection per operation ({@link PooledConnections}), or the caller's
 * open transaction ({@link CallerTransaction}). Internal plumbing of dedup's SQL stores.
 */
public interface Connections {

    /**
     * Statements to run on one connection.
     *
     * @param <T> what the statements find out
     */
    interface Work<T> {
        /**
         * Runs the statements.
         *
         * @param connection the connection to run them on; not to be closed
         * @return what they found out
         * @throws SQLException when a statement fails
         */
        T run(Connection connection) throws SQLException;
    }

    /**
     * Runs {@code work}, translating driver errors into dedup's exceptions for {@code operation}.
     *
     * @param <T> what the work finds out
     * @param work the statements
     * @param operation the store operation, for messages, such as {@code "claim"}
     * @return what the work found out
     */
    <T> T run(Work<T> work, String operation);

    /**
     * As {@link #run}, but when the connection breaks while {@code work} is out (the server may have acted, the
     * reply is lost), runs {@code afterLostReply} on a fresh connection, once, if there is time: it must find out
     * what the first attempt did, so that the caller hears its own outcome rather than a failure or a stranger's.
     *
     * @param <T> what the work finds out
     * @param work the statements
     * @param afterLostReply the statements to run after a lost reply, or null to report the failure instead
     * @param operation the store operation, for messages, such as {@code "claim"}
     * @return what the work found out
     */
    default <T> T runResending(Work<T> work, Work<T> afterLostReply, String operation) {
        return run(work, operation);
    }
}
