package dev.dedup.outbox;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import dev.dedup.jdbc.CallerTransaction;
import dev.dedup.jdbc.TableName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The transactional outbox on a PostgreSQL, MySQL 8 or MariaDB 10.6+ table: {@link #append} writes an event with one
 * {@code INSERT} on the caller's connection, inside the caller's business transaction, so the event exists exactly
 * when the business change commits. An {@link OutboxRelay} publishes committed events; a pg_cron job or a MySQL
 * {@code EVENT} (or {@link #purgePublished}) deletes them once published and older than the retention.
 *
 * <pre>{@code
 * Outbox outbox = Outbox.builder(dataSource).table("outbox").build();
 * outbox.createSchema();   // once, at deployment: table, indexes, purge procedure and its schedule
 * }</pre>
 *
 * <p>The database is found from the first connection's metadata, unless {@link Builder#database} names it.
 * Thread-safe; holds no connection of its own between calls.
 */
public final class Outbox {
    static final int PURGE_BATCH = 5_000;
    static final int PURGE_MAX_BATCHES = 100;

    private final DataSource dataSource;
    private final TableName table;
    private final Duration retention;
    private final boolean notifyRelays;
    /** Named by the builder, or found from the first connection; then fixed. */
    private volatile OutboxDialect dialect;

    private Outbox(DataSource dataSource, TableName table, Duration retention, boolean notifyRelays,
            OutboxDatabase database) {
        this.dataSource = dataSource;
        this.table = table;
        this.retention = retention;
        this.notifyRelays = notifyRelays;
        this.dialect = database == null ? null : database.dialect(table);
    }

    /**
     * Starts an outbox on the application's {@link DataSource}, which the relay, the schema and the metrics use.
     *
     * @param dataSource where connections come from; the outbox never closes it
     * @return a builder for table {@code outbox} and a retention of 1 day
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * Appends an event inside the caller's open transaction. Nothing is committed here: the event is visible to
     * the relay once the caller commits, and gone if the caller rolls back.
     *
     * @param transaction the caller's connection, auto-commit off, inside the business transaction
     * @param destination where the event goes: a Kafka topic, a RabbitMQ exchange ({@code ""} for the default one)
     * @param key the ordering key (Kafka record key, RabbitMQ routing key), or null; events with the same key are
     *     published in append order
     * @param payload the message body
     * @param headers further headers (names not blank, not {@code message-id}); may be empty
     * @return the event's message id, a UUID, which it keeps through every republish
     * @throws IllegalArgumentException when {@code transaction} is in auto-commit mode, or an argument is invalid
     * @throws DedupStoreException when the insert fails; the caller's transaction is then aborted
     */
    public String append(Connection transaction, String destination, String key, byte[] payload,
            Map<String, String> headers) {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(headers, "headers");
        String[] names = checkedHeaderNames(headers);
        String[] values = new String[names.length];
        for (int i = 0; i < names.length; i++) {
            String name = names[i];
            values[i] = Objects.requireNonNull(headers.get(name), () -> "headers: value of " + quote(name));
        }
        String messageId = UUID.randomUUID().toString();
        try {
            CallerTransaction.requireOpen(transaction, "Outbox.append", "the event");
            try (PreparedStatement insert = transaction.prepareStatement(dialect(transaction).append())) {
                insert.setString(1, messageId);
                insert.setString(2, destination);
                insert.setString(3, key);
                insert.setBytes(4, payload);
                insert.setString(5, HeadersJson.write(names, values));
                insert.executeUpdate();
            }
        } catch (SQLException e) {
            throw failure("append", e);
        }
        return messageId;
    }

    private static String[] checkedHeaderNames(Map<String, String> headers) {
        for (String name : headers.keySet()) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("header names must not be blank, but was " + quote(name));
            }
            if (name.equalsIgnoreCase(OutboxEvent.MESSAGE_ID_HEADER)) {
                throw new IllegalArgumentException("header " + quote(name) + " is set by the outbox (the event's"
                        + " stable id); leave it out");
            }
        }
        return new TreeMap<>(headers).keySet().toArray(String[]::new);
    }

    private static String quote(String value) {
        return value == null ? "null" : "'" + value + "'";
    }

    /**
     * Creates the table, its indexes and the purge procedure, and schedules the purge every minute with this outbox's
     * retention: on PostgreSQL as a pg_cron job where pg_cron allows, on MySQL and MariaDB as an {@code EVENT}. A
     * table made by an earlier version gets the columns it lacks. Idempotent; replicas that run it together take
     * turns.
     *
     * @return what was set up: whether the purge is scheduled, and if not, why and what to schedule instead
     */
    public OutboxSchemaReport createSchema() {
        return createSchema(null);
    }

    /**
     * As {@link #createSchema()}, scheduling the job through {@code cronDatabase} (a DataSource for the database
     * named by {@code cron.database_name}) when pg_cron lives in another database than the table.
     *
     * @param cronDatabase PostgreSQL only: connections to the database where pg_cron is installed, or null to use the
     *     table's; ignored on MySQL and MariaDB
     * @return what was set up
     */
    public OutboxSchemaReport createSchema(DataSource cronDatabase) {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            return dialect(connection).createSchema(connection, retention, notifyRelays, cronDatabase);
        } catch (SQLException e) {
            throw failure("createSchema", e);
        }
    }

    /**
     * Removes what {@link #createSchema()} made: the purge's schedule (where pg_cron is reachable), the procedure and
     * the table, with any events still in it. Idempotent.
     *
     * @param cronDatabase PostgreSQL only: connections to the database where pg_cron is installed, or null to use the
     *     table's; ignored on MySQL and MariaDB
     */
    public void dropSchema(DataSource cronDatabase) {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            dialect(connection).dropSchema(connection, cronDatabase);
        } catch (SQLException e) {
            throw failure("dropSchema", e);
        }
    }

    /**
     * Deletes one batch of events published longer ago than the retention, oldest first; for applications without
     * pg_cron or the event scheduler, to be called on a schedule until it returns less than {@code batchSize}.
     *
     * @param batchSize the most rows to delete, from 1 to 100,000
     * @return how many rows were deleted
     */
    public int purgePublished(int batchSize) {
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be from 1 to 100000, but was " + batchSize);
        }
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            return dialect(connection).purgePublished(connection, retention, batchSize);
        } catch (SQLException e) {
            throw failure("purgePublished", e);
        }
    }

    /** {@return how many events are waiting to be published; parked events are not waiting} */
    public long pendingCount() {
        return query("pendingCount", OutboxDialect::pending);
    }

    /**
     * {@return how many events are parked: rejected by the broker {@link OutboxRelay.Builder#maxAttempts} times for a
     * reason of their own, and left out of every batch until {@link #replayParked()}}
     */
    public long parkedCount() {
        return query("parkedCount", OutboxDialect::parked);
    }

    /**
     * Puts every parked event back in line with its attempts reset to 0, for when the cause is fixed (the topic or
     * exchange created, the limit raised). The relay publishes them in its next cycles, after the later events of
     * their keys that went out meanwhile: parking gave up their key's order. To replay only some, run the SQL in the
     * outbox documentation with a {@code WHERE} of your own.
     *
     * @return how many events were put back
     */
    public int replayParked() {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(true);
            OutboxDialect dialect = dialect(connection);
            dialect.beginTransaction(connection);
            return statement.executeUpdate(dialect.replayParked());
        } catch (SQLException e) {
            throw failure("replayParked", e);
        }
    }

    /** {@return how long the oldest unpublished event has waited, by the database's clock; empty when none waits} */
    public Optional<Duration> oldestUnpublishedAge() {
        long millis = query("oldestUnpublishedAge", OutboxDialect::oldestUnpublishedMillis);
        return millis < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(millis));
    }

    /** {@return the table's name, as given} */
    public String table() {
        return table.display();
    }

    /** {@return the retention of published events} */
    public Duration retention() {
        return retention;
    }

    /** {@return whether committed appends wake the relays (LISTEN/NOTIFY), see {@link Builder#notifyRelays}} */
    public boolean notifiesRelays() {
        return notifyRelays;
    }

    DataSource dataSource() {
        return dataSource;
    }

    TableName tableName() {
        return table;
    }

    /**
     * The dialect of the database {@code connection} reaches, found from its metadata at the first call (the same
     * for every caller: a race finds the same database twice).
     *
     * @throws DedupConfigurationException when it is not a database the outbox runs on, or LISTEN/NOTIFY was asked
     *     for where there is none
     */
    OutboxDialect dialect(Connection connection) throws SQLException {
        OutboxDialect found = dialect;
        if (found == null) {
            OutboxDatabase database = OutboxDatabase.of(connection);
            checkNotifyRelays(database, notifyRelays);
            found = database.dialect(table);
            dialect = found;
        }
        return found;
    }

    private static void checkNotifyRelays(OutboxDatabase database, boolean notifyRelays) {
        if (notifyRelays && database != OutboxDatabase.POSTGRESQL) {
            throw new DedupConfigurationException("notifyRelays(true) needs PostgreSQL's LISTEN/NOTIFY, and the outbox"
                    + " is on " + database + ": leave it off, the relays poll");
        }
    }

    /** A single bigint, or -1 when the query returns no row or null. */
    private long query(String operation, Function<OutboxDialect, String> sql) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement();
                ResultSet row = statement.executeQuery(sql.apply(dialect(connection)))) {
            if (!row.next()) {
                return -1;
            }
            long value = row.getLong(1);
            return row.wasNull() ? -1 : value;
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    DedupStoreException failure(String operation, SQLException e) {
        // SQLState class 08 is a broken connection: worth retrying. Driver messages name no password.
        boolean retryable = e.getSQLState() != null && e.getSQLState().startsWith("08");
        // An undefined column: a table made before the parking columns, which createSchema adds.
        OutboxDialect known = dialect;
        String hint = known != null && known.isMissingColumn(e) ? "; the table may predate columns of this version:"
                + " run Outbox.createSchema() again, or: " + known.addParkingColumns() : "";
        return new DedupStoreException("outbox " + table.display() + " " + operation + " failed: "
                + e.getClass().getSimpleName() + " [" + e.getSQLState() + "] " + e.getMessage() + hint, e, retryable);
    }

    /** Builds an {@link Outbox}. */
    public static final class Builder {
        private final DataSource dataSource;
        private String table = "outbox";
        private Duration retention = Duration.ofDays(1);
        private boolean notifyRelays;
        private OutboxDatabase database;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The table's name.
         *
         * @param table {@code name} or {@code schema.name} ({@code database.name} on MySQL): letters, digits and
         *     underscores; default {@code outbox}
         * @return this builder
         */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /**
         * How long published events are kept before the purge deletes them (for inspection and replays).
         *
         * @param retention from 1 minute to 365 days, whole seconds; default 1 day
         * @return this builder
         */
        public Builder retention(Duration retention) {
            Objects.requireNonNull(retention, "retention");
            if (retention.compareTo(Duration.ofMinutes(1)) < 0 || retention.compareTo(Duration.ofDays(365)) > 0) {
                throw new IllegalArgumentException("retention must be from 1 minute to 365 days, but was "
                        + retention);
            }
            this.retention = retention;
            return this;
        }

        /**
         * Whether a commit with appends wakes the relays at once ({@code LISTEN/NOTIFY}), so an event's latency is
         * not bound by the poll interval. {@link Outbox#createSchema()} installs (or, when off, removes) a
         * statement-level trigger that notifies; each relay then holds one connection of the pool to listen on.
         * The cost: PostgreSQL serialises the commits of notifying transactions on one lock, which can limit append
         * throughput under many concurrent writers; off by default. PostgreSQL only: an outbox on MySQL or MariaDB
         * with it on fails its first call with a {@link DedupConfigurationException}.
         *
         * @param notifyRelays true to wake relays on commit; default false
         * @return this builder
         */
        public Builder notifyRelays(boolean notifyRelays) {
            this.notifyRelays = notifyRelays;
            return this;
        }

        /**
         * The database, where finding it from the connection's metadata is not wanted (a proxy or a driver that
         * names it otherwise).
         *
         * @param database the database the {@link DataSource} reaches; default null: found from the first connection
         * @return this builder
         */
        public Builder database(OutboxDatabase database) {
            this.database = database;
            return this;
        }

        /**
         * Builds the outbox; it does not touch the database (call {@link Outbox#createSchema()} once at deployment).
         *
         * @return the outbox
         * @throws DedupConfigurationException when the table name is not a plain identifier, or
         *     {@link #notifyRelays} is on for a database without LISTEN/NOTIFY
         */
        public Outbox build() {
            TableName name = TableName.parse(table, database == null ? "schema" : database.qualifierWord());
            if (database != null) {
                checkNotifyRelays(database, notifyRelays);
            }
            return new Outbox(dataSource, name, retention, notifyRelays, database);
        }
    }
}
