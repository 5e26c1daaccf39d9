package dev.dedup.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;

/** Where a store's statements run: a pooled connection per operation, or the caller's open transaction. */
interface Connections {

    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Runs {@code work}, translating driver errors into dedup's exceptions for {@code operation}. */
    <T> T run(Work<T> work, String operation);

    /**
     * As {@link #run}, but when the connection breaks while {@code work} is out (the server may have acted, the
     * reply is lost), runs {@code afterLostReply} on a fresh connection, once, if there is time: it must find out
     * what the first attempt did, so that the caller hears its own outcome rather than a failure or a stranger's.
     */
    default <T> T runResending(Work<T> work, Work<T> afterLostReply, String operation) {
        return run(work, operation);
    }
}
