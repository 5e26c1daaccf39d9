package dev.dedup.outbox;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * Everything the outbox runs on its table that differs between databases: one implementation per SQL dialect. What
 * the statements mean, and the relay's logic around them (batches, key order, parking), are the same everywhere and
 * live in {@link Outbox} and {@link OutboxRelay}.
 */
interface OutboxDialect {

    /**
     * Creates the table (or adds the columns a table of an earlier version lacks), its indexes, the purge and its
     * schedule. Idempotent; replicas that run it together take turns.
     */
    OutboxSchemaReport createSchema(Connection connection, Duration retention, boolean notifyRelays,
            DataSource cronDatabase) throws SQLException;

    /** Removes the purge's schedule, the purge and the table. Idempotent. */
    void dropSchema(Connection connection, DataSource cronDatabase) throws SQLException;

    /** What adds the parking columns to a table made before them: the fix a missing column's error names. */
    String addParkingColumns();

    /** Whether {@code e} is the server's "no such column". */
    boolean isMissingColumn(SQLException e);

    /** Parameters: message id, destination, key, payload, headers (JSON text, {@link HeadersJson}). */
    String append();

    /**
     * The relay's batch: the oldest unpublished events that are not parked, locked, skipping rows another relay
     * holds. Parameter: the limit. Columns: id, message id, destination, key, payload, headers (JSON text), when it
     * was appended in microseconds since the epoch.
     */
    String nextBatch();

    /**
     * The unpublished, unparked events of {@code keys} keys up to an id, in id order, read after the batch was
     * locked. Parameters: the keys ({@link #bindAll}), the id. Columns: id, key.
     */
    String unpublishedOfKeys(int keys);

    /** Marks {@code ids} events published. Parameters: the ids ({@link #bindAll}). */
    String markPublished(int ids);

    /**
     * Binds {@code values} from parameter {@code first} on, as the list of {@link #unpublishedOfKeys} or
     * {@link #markPublished} takes them.
     *
     * @param type the values' SQL type: {@code "text"} or {@code "bigint"}
     * @return the next parameter's index
     */
    int bindAll(PreparedStatement statement, int first, String type, List<?> values) throws SQLException;

    /**
     * Counts a failed attempt for each of {@code ids} with its error, and parks those that reach
     * {@code maxAttempts}, in the relay's transaction, which holds their rows.
     *
     * @return the ids this call parked
     */
    List<Long> recordRejections(Connection connection, int maxAttempts, List<Long> ids, List<String> errors)
            throws SQLException;

    /**
     * Sets up the next transaction on {@code connection}, before its first statement: the relay's, and the replay's.
     * It must take no gap locks, which would hold appends up, and each of its reads must see the latest commits.
     */
    void beginTransaction(Connection connection) throws SQLException;

    /** Deletes one batch of events published longer ago than {@code retention}, oldest first. */
    int purgePublished(Connection connection, Duration retention, int batchSize) throws SQLException;

    /** A count of the events waiting to be published. */
    String pending();

    /** A count of the parked events. */
    String parked();

    /** Puts every parked event back in line, attempts reset, its last error kept. */
    String replayParked();

    /** Milliseconds since the oldest waiting event was appended, by the server's clock; no row when none waits. */
    String oldestUnpublishedMillis();
}
