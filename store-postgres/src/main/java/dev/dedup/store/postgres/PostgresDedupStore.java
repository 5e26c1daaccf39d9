package dev.dedup.store.postgres;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.jdbc.CallerTransaction;
import dev.dedup.jdbc.Connections;
import dev.dedup.jdbc.LostReplies;
import dev.dedup.jdbc.PooledConnections;
import dev.dedup.jdbc.SqlStoreBuilder;
import dev.dedup.jdbc.TransactionalInbox;
import dev.dedup.spi.AbstractDedupStore;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * A {@link DedupStore} on PostgreSQL. A claim is one statement and one round trip: insert the key, or report the row
 * in the way (see {@link PostgresTable#claim()}); only an expired row costs a second, the take-over. A batch of
 * claims, or of settlements, is one statement too. Expiry is decided by the server's
 * clock ({@code statement_timestamp()}), so the application servers' clocks do not matter.
 *
 * <pre>{@code
 * PostgresDedupStore store = PostgresDedupStore.builder(dataSource).table("dedup_claims").namespace("orders").build();
 * store.createSchema();   // once, at deployment: table, index, purge procedure and the pg_cron job
 * }</pre>
 *
 * <p>{@link #inTransaction(Connection)} runs the same operations inside the caller's transaction: the transactional
 * inbox, where the claim and the business writes commit or roll back together.
 */
public final class PostgresDedupStore extends AbstractDedupStore implements TransactionalInbox {
    /**
     * How many claim statements one store sends at once before later claims wait to go out together. Fewer means
     * larger batches: on 2 cores at 16 threads, 1 to 4 all beat the raw insert and 8 fell behind it (short JMH runs,
     * PeerBenchmark); 2 lets a pair of callers claim without waiting.
     */
    private static final int CLAIM_STATEMENTS_IN_FLIGHT = 2;
    /**
     * The SQL of every operation, built once per table: one set for pooled connections, where a lapsed lease ends
     * the claim, and one for the {@link #inTransaction} views, where it cannot (see {@link PostgresTable#complete}).
     */
    private record Statements(String claim, String takeOver, String claimAll, String claimEach, String complete,
            String release, String settleAll, String extend, String stateOfOwner, String statesOfOwners,
            String inspect, String forget) {
        static Statements of(PostgresTable table, boolean leaseClock) {
            return new Statements(table.claim(), table.takeOver(), table.claimAll(), table.claimEach(),
                    table.complete(leaseClock), table.release(leaseClock), table.settleAll(leaseClock),
                    table.extend(leaseClock), table.stateOfOwner(), table.statesOfOwners(), table.inspect(),
                    table.forget());
        }
    }

    private final DataSource dataSource;
    private final Connections connections;
    private final PostgresTable table;
    private final PostgresErrors errors;
    private final Statements sql;
    private final Statements transactionSql;
    private final Duration timeout;
    private final int timeoutSeconds;
    private final Runnable onClose;
    /** Single claims arriving together go out as one statement; null on a transaction's view (one connection). */
    private final ClaimCoalescer coalescer;

    private PostgresDedupStore(DataSource dataSource, Connections connections, PostgresTable table, PostgresErrors errors, Statements sql,
            Statements transactionSql, String namespace, Duration timeout, Runnable onClose) {
        super(namespace);
        this.dataSource = dataSource;
        this.connections = connections;
        this.table = table;
        this.errors = errors;
        this.sql = sql;
        this.transactionSql = transactionSql;
        this.timeout = timeout;
        // JDBC counts query timeouts in whole seconds: round up.
        this.timeoutSeconds = PooledConnections.wholeSeconds(timeout);
        this.onClose = onClose;
        this.coalescer = connections instanceof CallerTransaction ? null
                : new ClaimCoalescer(CLAIM_STATEMENTS_IN_FLIGHT, new ClaimCoalescer.Batch() {
                    @Override
                    public ClaimResult claimOne(ClaimCoalescer.Request request) {
                        return claimAlone(request.key, request.owner, request.lease, request.fingerprint);
                    }

                    @Override
                    public Map<ClaimCoalescer.Request, ClaimResult> claimTogether(
                            List<ClaimCoalescer.Request> requests) {
                        return claimEach(requests);
                    }
                }, namespace, timeout);
    }

    /**
     * Starts a store on the application's {@link DataSource} (a pool, ideally).
     *
     * @param dataSource where connections come from; the store never closes it
     * @return a builder for table {@code dedup_claims}, namespace {@code default} and a 5 s timeout
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * {@return the {@code DataSource} this store takes its connections from: the one given to the builder, or the
     * store's own pool when it was opened by URI} Its transactions are the ones {@link #inTransaction} can join.
     */
    @Override
    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * The same store bound to the caller's open {@code transaction}: claims, completions and releases run on that
     * connection and are never committed here, so they commit or roll back with the caller's business writes.
     * A rollback frees the key; a concurrent delivery in another transaction waits for this one and then sees the
     * record as a duplicate. Use READ COMMITTED (PostgreSQL's default); under REPEATABLE READ or SERIALIZABLE a
     * concurrent delivery fails with a retryable {@link DedupStoreException} instead. Closing the view does nothing.
     *
     * <p>Inside the transaction that claimed a key nobody else can take it over, so complete, fail, extend and
     * release there succeed for the claim's owner whatever the lease clock says: a slow step does not leave an
     * expired claim to be committed and run again. Check their results all the same: false means the claim is not
     * this transaction's (for example, it came from another store or transaction).
     *
     * @param transaction the caller's connection, auto-commit off, inside the transaction that makes the business
     *     writes; the caller commits, rolls back and closes it
     * @return a view of this store on {@code transaction}, for this transaction only
     * @throws IllegalArgumentException when {@code transaction} is in auto-commit mode, where each statement would
     *     commit on its own and the claim would not share the fate of the business writes
     */
    @Override
    public DedupStore inTransaction(Connection transaction) {
        return new PostgresDedupStore(dataSource, CallerTransaction.of(transaction, errors), table, errors, transactionSql,
                transactionSql, namespace(), timeout, () -> {});
    }

    /**
     * Creates the table, its expiry index, the purge procedure and, where pg_cron allows, the purge job. Idempotent.
     *
     * @return what was set up: whether the purge job is scheduled, and if not, why and what to schedule instead
     */
    public PostgresSchemaReport createSchema() {
        return createSchema(null);
    }

    /**
     * As {@link #createSchema()}, scheduling the job through {@code cronDatabase} (a DataSource for the database
     * named by {@code cron.database_name}) when pg_cron lives in another database than the table.
     *
     * @param cronDatabase connections to the database where pg_cron is installed, or null to use the table's
     * @return what was set up: whether the purge job is scheduled, and if not, why and what to schedule instead
     */
    public PostgresSchemaReport createSchema(DataSource cronDatabase) {
        return connections.run(connection -> PostgresSchema.create(connection, table, cronDatabase),
                "createSchema");
    }

    /**
     * Removes what {@link #createSchema()} made: the purge job (where pg_cron is reachable), the purge procedure, and
     * the table with every record in it, of every namespace. For tests and decommissioning; idempotent.
     */
    public void dropSchema() {
        dropSchema(null);
    }

    /**
     * As {@link #dropSchema()}, unscheduling the job through {@code cronDatabase} when pg_cron lives elsewhere.
     *
     * @param cronDatabase connections to the database where pg_cron is installed, or null to use the table's
     */
    public void dropSchema(DataSource cronDatabase) {
        connections.run(connection -> {
            PostgresSchema.drop(connection, table, cronDatabase);
            return null;
        }, "dropSchema");
    }

    /** Checks that the table exists with the expected columns; a difference fails with the DDL to fix it. */
    public void validateSchema() {
        connections.run(connection -> {
            PostgresSchema.validate(connection, table);
            return null;
        }, "validateSchema");
    }

    /**
     * Deletes up to {@code batchSize} expired rows, of every namespace, and returns how many: the purge to schedule
     * yourself where pg_cron is not available. Rows a claim is taking over are skipped, not waited for.
     *
     * @param batchSize the most rows to delete in this call, 1 to 100000; call again while it returns that many
     * @return how many expired rows were deleted
     * @throws IllegalArgumentException if {@code batchSize} is out of range
     */
    public int purgeExpired(int batchSize) {
        PooledConnections.checkPurgeBatch(batchSize);
        return connections.run(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(table.purgeBatch("?"))) {
                statement.setQueryTimeout(timeoutSeconds);
                statement.setInt(1, batchSize);
                return statement.executeUpdate();
            }
        }, "purgeExpired");
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        if (coalescer == null) {
            return claimAlone(key, owner, lease, fingerprint);
        }
        return coalescer.claim(new ClaimCoalescer.Request(key, owner, lease, fingerprint));
    }

    /** One claim, one statement (two for a take-over). */
    private ClaimResult claimAlone(String key, String owner, Duration lease, byte[] fingerprint) {
        // After a lost reply the same owner claims again: a row the first attempt wrote comes back as ours.
        Connections.Work<ClaimResult> claim = connection -> {
            SnapshotRaces races = new SnapshotRaces(namespace(), timeout);
            while (true) {
                ClaimResult result = claimOnce(connection, key, owner, lease, fingerprint);
                if (result != null) {
                    return result;
                }
                races.beforeRerun(connection);
            }
        };
        return connections.runResending(claim, claim, "claim");
    }

    /** The claim statement, then the take-over if it met an expired row; null when the claim must run again. */
    private ClaimResult claimOnce(Connection connection, String key, String owner, Duration lease,
            byte[] fingerprint) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql.claim())) {
            statement.setQueryTimeout(timeoutSeconds);
            statement.setString(1, namespace());
            statement.setString(2, key);
            statement.setString(3, owner);
            statement.setLong(4, lease.toMillis());
            statement.setBytes(5, fingerprint);
            statement.setString(6, namespace());
            statement.setString(7, key);
            try (ResultSet row = statement.executeQuery()) {
                if (!row.next()) {
                    return null; // the row was committed after the snapshot
                }
                if (row.getBoolean("live")) {
                    return toResult(key, owner, row);
                }
            }
        }
        try (PreparedStatement statement = connection.prepareStatement(sql.takeOver())) {
            statement.setQueryTimeout(timeoutSeconds);
            statement.setString(1, owner);
            statement.setLong(2, lease.toMillis());
            statement.setBytes(3, fingerprint);
            statement.setString(4, namespace());
            statement.setString(5, key);
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? toResult(key, owner, row) : null; // none: taken over or purged meanwhile
            }
        }
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        // The statement takes each distinct key once; repeats in the batch are duplicates of the first.
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        Connections.Work<Map<String, ClaimResult>> claimAll = connection -> {
            SnapshotRaces races = new SnapshotRaces(namespace(), timeout);
            Map<String, ClaimResult> found = new HashMap<>();
            while (true) {
                List<String> pending = new ArrayList<>();
                List<String> owners = new ArrayList<>();
                ownerByKey.forEach((key, owner) -> {
                    if (!found.containsKey(key)) {
                        pending.add(key);
                        owners.add(owner);
                    }
                });
                try (PreparedStatement statement = connection.prepareStatement(sql.claimAll())) {
                    statement.setQueryTimeout(timeoutSeconds);
                    statement.setString(1, namespace());
                    statement.setLong(2, lease.toMillis());
                    Array keyArray = connection.createArrayOf("text", pending.toArray());
                    Array ownerArray = connection.createArrayOf("text", owners.toArray());
                    statement.setArray(3, keyArray);
                    statement.setArray(4, ownerArray);
                    try (ResultSet row = statement.executeQuery()) {
                        while (row.next()) {
                            String key = row.getString("key");
                            found.put(key, toResult(key, ownerByKey.get(key), row));
                        }
                    }
                }
                if (found.size() == ownerByKey.size()) {
                    return found;
                }
                races.beforeRerun(connection);
            }
        };
        return inInputOrder(keys, connections.runResending(claimAll, claimAll, "claimAll"));
    }

    /** Claims of distinct keys, each with its own owner, lease and fingerprint, in one statement. */
    private Map<ClaimCoalescer.Request, ClaimResult> claimEach(List<ClaimCoalescer.Request> requests) {
        Connections.Work<Map<ClaimCoalescer.Request, ClaimResult>> claimEach = connection -> {
            SnapshotRaces races = new SnapshotRaces(namespace(), timeout);
            Map<ClaimCoalescer.Request, ClaimResult> found = new HashMap<>();
            Map<String, ClaimCoalescer.Request> byKey = new HashMap<>();
            while (true) {
                List<ClaimCoalescer.Request> pending = requests.stream().filter(r -> !found.containsKey(r)).toList();
                pending.forEach(request -> byKey.put(request.key, request));
                try (PreparedStatement statement = connection.prepareStatement(sql.claimEach())) {
                    statement.setQueryTimeout(timeoutSeconds);
                    statement.setString(1, namespace());
                    statement.setArray(2, connection.createArrayOf("text",
                            pending.stream().map(r -> r.key).toArray()));
                    statement.setArray(3, connection.createArrayOf("text",
                            pending.stream().map(r -> r.owner).toArray()));
                    statement.setArray(4, connection.createArrayOf("bigint",
                            pending.stream().map(r -> r.lease.toMillis()).toArray()));
                    statement.setArray(5, connection.createArrayOf("bytea",
                            pending.stream().map(r -> r.fingerprint).toArray(byte[][]::new)));
                    try (ResultSet row = statement.executeQuery()) {
                        while (row.next()) {
                            ClaimCoalescer.Request request = byKey.get(row.getString("key"));
                            found.put(request, toResult(request.key, request.owner, row));
                        }
                    }
                }
                if (found.size() == requests.size()) {
                    return found;
                }
                races.beforeRerun(connection);
            }
        };
        return connections.runResending(claimEach, claimEach, "claim");
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        Binder binder = statement -> {
            statement.setString(1, outcome.name());
            statement.setLong(2, retention.toMillis());
            statement.setBytes(3, result);
            statement.setString(4, namespace());
            statement.setString(5, claim.key());
            statement.setString(6, claim.owner());
        };
        // After a lost reply, a record already ended in this outcome by this owner was ended by the lost attempt.
        return connections.runResending(connection -> update(connection, sql.complete(), binder),
                connection -> update(connection, sql.complete(), binder)
                        || LostReplies.endedIn(outcome, stateOfOwner(connection, claim)),
                outcome == RecordState.FAILED ? "fail" : "complete");
    }

    @Override
    protected boolean doRelease(Claim claim) {
        Binder binder = statement -> {
            statement.setString(1, namespace());
            statement.setString(2, claim.key());
            statement.setString(3, claim.owner());
        };
        // After a lost reply, no record of this owner left means the lost attempt deleted it.
        return connections.runResending(connection -> update(connection, sql.release(), binder),
                connection -> update(connection, sql.release(), binder) || stateOfOwner(connection, claim) == null,
                "release");
    }

    @Override
    protected List<Boolean> doSettleAll(List<Settlement> settlements) {
        PostgresSettleBatch batch = new PostgresSettleBatch(namespace(), settlements, timeoutSeconds);
        // After a lost reply, each settlement the rerun misses is read back as doFinish and doRelease read theirs.
        return connections.runResending(connection -> batch.settle(connection, sql.settleAll()),
                connection -> batch.settleAfterLostReply(connection, sql.settleAll(), sql.statesOfOwners()),
                "settleAll");
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        Binder binder = statement -> {
            statement.setLong(1, lease.toMillis());
            statement.setString(2, namespace());
            statement.setString(3, claim.key());
            statement.setString(4, claim.owner());
        };
        // Moving the expiry again is harmless: resend as is.
        Connections.Work<Boolean> extend = connection -> update(connection, sql.extend(), binder);
        return connections.runResending(extend, extend, "extend");
    }

    @Override
    protected KeyRecord doInspect(String key) {
        // A read changes nothing: after a lost reply it is simply read again.
        Connections.Work<KeyRecord> inspect = connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql.inspect())) {
                statement.setQueryTimeout(timeoutSeconds);
                statement.setString(1, namespace());
                statement.setString(2, key);
                try (ResultSet row = statement.executeQuery()) {
                    if (!row.next()) {
                        return null;
                    }
                    return new KeyRecord(key, RecordState.valueOf(row.getString("state")),
                            expiresAt(row), row.getString("owner"),
                            row.getBytes("fingerprint"), row.getBytes("result"));
                }
            }
        };
        return connections.runResending(inspect, inspect, "inspect");
    }

    @Override
    protected boolean doForget(String key) {
        // Not resent after a lost reply: the second delete would find nothing and report false for a record the
        // first one removed. The caller sees the failure instead and can inspect the key.
        return connections.run(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql.forget())) {
                statement.setQueryTimeout(timeoutSeconds);
                statement.setString(1, namespace());
                statement.setString(2, key);
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() && row.getBoolean(1);
                }
            }
        }, "forget");
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    private interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    private boolean update(Connection connection, String statementSql, Binder binder) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(statementSql)) {
            statement.setQueryTimeout(timeoutSeconds);
            binder.bind(statement);
            return statement.executeUpdate() == 1;
        }
    }

    /** The state of the claim's record if its owner still holds or held it, else null. */
    private String stateOfOwner(Connection connection, Claim claim) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql.stateOfOwner())) {
            statement.setQueryTimeout(timeoutSeconds);
            statement.setString(1, namespace());
            statement.setString(2, claim.key());
            statement.setString(3, claim.owner());
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? row.getString(1) : null;
            }
        }
    }

    private ClaimResult toResult(String key, String owner, ResultSet row) throws SQLException {
        Instant expiresAt = expiresAt(row);
        if (owner.equals(row.getString("owner"))) {
            return new Claim(namespace(), key, owner, expiresAt);
        }
        return new Duplicate(key, RecordState.valueOf(row.getString("state")), expiresAt, row.getBytes("result"),
                row.getBytes("fingerprint"));
    }

    /** The row's expiry, from {@link PostgresTable#EXPIRES_US}. */
    private static Instant expiresAt(ResultSet row) throws SQLException {
        return Instant.EPOCH.plus(row.getLong("expires_us"), ChronoUnit.MICROS);
    }

    /** Settings for a {@link PostgresDedupStore}; each setter checks its value at once. */
    public static final class Builder extends SqlStoreBuilder<Builder, PostgresDedupStore> {
        private PostgresTable table = PostgresTable.parse(PostgresTable.DEFAULT_NAME);

        private Builder(DataSource dataSource) {
            super(dataSource);
        }

        /**
         * The table, {@code name} or {@code schema.name} (default {@code dedup_claims}).
         *
         * @param table the table's name, optionally schema-qualified; several namespaces may share one table
         * @return this builder
         * @throws dev.dedup.DedupConfigurationException if a part is not letters, digits and underscores (first not a
         *     digit, at most 48): the name is put into SQL unquoted
         */
        @Override
        public Builder table(String table) {
            this.table = PostgresTable.parse(table);
            return this;
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        protected PostgresDedupStore newStore() {
            PostgresErrors errors = new PostgresErrors(table, PostgresLocation.of(dataSource));
            return new PostgresDedupStore(dataSource, new PooledConnections(dataSource, errors, timeout), table, errors,
                    Statements.of(table, true), Statements.of(table, false), namespace, timeout, onClose);
        }

        /** Creates table, index, purge procedure and pg_cron job (see {@link PostgresDedupStore#createSchema()}). */
        @Override
        protected void createSchemaOf(PostgresDedupStore store) {
            store.createSchema();
        }

        @Override
        protected void validateSchemaOf(PostgresDedupStore store) {
            store.validateSchema();
        }
    }
}
