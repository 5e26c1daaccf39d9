package dev.dedup.store.mysql;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
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
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

/**
 * A {@link DedupStore} on MySQL or MariaDB (InnoDB). A claim is one statement: insert the key, or take over the row
 * in the way if it has expired, the check and the write one {@code INSERT ... ON DUPLICATE KEY UPDATE} on the
 * server's clock (see {@link MysqlTable#claim()}); only a duplicate costs a second statement, to read the record in
 * the way. A batch of claims is two statements, one write and one read, whatever its size. Correct under READ
 * COMMITTED and REPEATABLE READ: InnoDB's deadlocks and lock wait timeouts are retried within the store's timeout.
 *
 * <pre>{@code
 * MysqlDedupStore store = MysqlDedupStore.builder(dataSource).table("dedup_claims").namespace("orders").build();
 * store.createSchema();   // once, at deployment: the table, the purge procedure and its event
 * }</pre>
 *
 * <p>{@link #inTransaction(Connection)} runs the same operations inside the caller's transaction: the transactional
 * inbox, where the claim and the business writes commit or roll back together. JDBC blocks, so the non-blocking view
 * is {@link dev.dedup.AsyncDedupStore#onExecutor}.
 */
public final class MysqlDedupStore extends AbstractDedupStore implements TransactionalInbox {
    /**
     * The SQL of every write, built once per table: one set for pooled connections, where a lapsed lease ends the
     * claim, and one for the {@link #inTransaction} views, where it cannot (see {@link MysqlTable#finish}).
     */
    private record Statements(String finish, String release, String extend) {
        static Statements of(MysqlTable table, boolean leaseClock) {
            return new Statements(table.finish(leaseClock), table.release(leaseClock), table.extend(leaseClock));
        }
    }

    private final DataSource dataSource;
    private final Connections connections;
    private final MysqlTable table;
    private final MysqlErrors errors;
    private final Statements sql;
    private final Statements transactionSql;
    private final Duration timeout;
    private final MysqlCalls calls;
    private final Runnable onClose;
    /** Whether the driver reports a row count per statement of a batch; asked by the store's first settleAll. */
    private final AtomicReference<Boolean> driverCountsBatches;

    private MysqlDedupStore(DataSource dataSource, Connections connections, MysqlTable table, MysqlErrors errors, Statements sql,
            Statements transactionSql, String namespace, Duration timeout, Runnable onClose,
            AtomicReference<Boolean> driverCountsBatches) {
        super(namespace);
        this.dataSource = dataSource;
        this.connections = connections;
        this.table = table;
        this.errors = errors;
        this.sql = sql;
        this.transactionSql = transactionSql;
        this.timeout = timeout;
        // In the caller's transaction a deadlock has rolled the caller's work back: only the caller may rerun it.
        this.calls = new MysqlCalls(namespace, PooledConnections.wholeSeconds(timeout), timeout,
                !(connections instanceof CallerTransaction));
        this.onClose = onClose;
        this.driverCountsBatches = driverCountsBatches;
    }

    /**
     * The settings of a store on {@code dataSource}, which should be a pool: the table {@code dedup_claims}, the
     * namespace {@code default} and a 5 s timeout until changed.
     *
     * @param dataSource the application's connections, through any JDBC driver for MySQL or MariaDB; the store never
     *     closes it
     * @return the builder
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
     * This store inside the caller's open {@code transaction}, the transactional inbox: every operation runs on that
     * connection and is never committed here, so the claim shares the fate of the business writes (a rollback frees
     * the key). Another delivery of the same key, in another transaction, waits for this one's row lock and then
     * finds a duplicate, at READ COMMITTED and REPEATABLE READ alike: the claim's read is a locking read, which sees
     * the latest row whatever the transaction's snapshot. InnoDB breaks a deadlock by rolling a transaction back, so
     * here a deadlock is not retried: it fails with a retryable {@link DedupStoreException}, and the caller retries
     * its whole transaction. Closing the view does nothing.
     *
     * <p>The row lock keeps everyone else off a key this transaction claimed until it ends, so here complete, fail,
     * extend and release check the claim's owner and state but not its lease.
     *
     * @param transaction the caller's connection with auto-commit off, in the business writes' transaction; the
     *     caller commits, rolls back and closes it
     * @return this store's view of {@code transaction}, for that transaction only
     * @throws IllegalArgumentException when {@code transaction} is in auto-commit mode (each statement would commit
     *     on its own)
     */
    @Override
    public DedupStore inTransaction(Connection transaction) {
        return new MysqlDedupStore(dataSource, CallerTransaction.of(transaction, errors), table, errors, transactionSql,
                transactionSql, namespace(), timeout, () -> {}, driverCountsBatches);
    }

    /**
     * Creates the table, the purge procedure and the event that calls it every minute. Idempotent. The event runs
     * only while the server's event scheduler is on and the event is enabled; the report says when either is not so
     * (and a warning is logged once). Instances that start together take turns through a named lock
     * ({@code GET_LOCK}), each waiting at most half the store's timeout for it.
     *
     * @return what was set up, and whether the event scheduler will run the purge
     * @throws DedupStoreException (retryable) when another connection held the schema lock all that wait
     */
    public MysqlSchemaReport createSchema() {
        // The schema lock's wait leaves the other half of the timeout to the statements that create the schema.
        int lockWaitSeconds = (int) Math.max(1, timeout.toSeconds() / 2);
        return connections.run(connection -> MysqlSchema.create(connection, table, MysqlSchema.EVENT_INTERVAL,
                lockWaitSeconds), "createSchema");
    }

    /**
     * Removes what {@link #createSchema()} made: the event, the purge procedure and the table with every record in
     * it, of every namespace. For tests and decommissioning; idempotent.
     */
    public void dropSchema() {
        connections.run(connection -> MysqlSchema.drop(connection, table), "dropSchema");
    }

    /**
     * Reads the table's shape from {@code information_schema}: a missing table, a missing column or one of another
     * type, another engine than InnoDB, another primary key than {@code (namespace, key)} or an AUTO_INCREMENT column
     * fails with a {@link dev.dedup.DedupConfigurationException} that names each difference and gives the DDL. A
     * purge event that exists but is not enabled is logged as a warning (once).
     */
    public void validateSchema() {
        connections.run(connection -> MysqlSchema.validateWithEvent(connection, table), "validateSchema");
    }

    /**
     * The purge for those who schedule it themselves (where the event scheduler is off): one statement that deletes
     * expired rows of every namespace, oldest first, at most {@code batchSize} of them.
     *
     * @param batchSize at most this many rows go, 1 to 100000; while the answer equals it, more may be waiting
     * @return the number of rows deleted
     * @throws IllegalArgumentException if {@code batchSize} is not in [1, 100000]
     */
    public int purgeExpired(int batchSize) {
        PooledConnections.checkPurgeBatch(batchSize);
        return connections.run(calls.untilDecided("purgeExpired", connection -> {
            try (PreparedStatement statement = calls.prepare(connection, table.purgeBatch("?"))) {
                statement.setInt(1, batchSize);
                return statement.executeUpdate();
            }
        }), "purgeExpired");
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        // After a lost reply the same owner claims again: a row the first attempt wrote comes back as ours.
        Connections.Work<ClaimResult> claim = calls.untilDecided("claim",
                connection -> claimOnce(connection, key, owner, lease, fingerprint));
        return connections.runResending(claim, claim, "claim");
    }

    /** The claim statement, then the record in the way if it lost; null when the claim must run again. */
    private ClaimResult claimOnce(Connection connection, String key, String owner, Duration lease,
            byte[] fingerprint) throws SQLException {
        try (PreparedStatement statement = calls.prepare(connection, table.claim(), Statement.RETURN_GENERATED_KEYS)) {
            statement.setBytes(1, calls.namespace);
            statement.setBytes(2, MysqlCalls.utf8(key));
            statement.setBytes(3, MysqlCalls.utf8(owner));
            statement.setLong(4, MysqlCalls.micros(lease));
            statement.setBytes(5, fingerprint);
            statement.executeUpdate();
            try (ResultSet won = statement.getGeneratedKeys()) {
                if (won.next() && won.getLong(1) > 0) {
                    return new Claim(namespace(), key, owner, MysqlCalls.instant(won.getLong(1)));
                }
            }
        }
        try (PreparedStatement statement = calls.prepare(connection, table.readOne())) {
            statement.setBytes(1, calls.namespace);
            statement.setBytes(2, MysqlCalls.utf8(key));
            try (ResultSet row = statement.executeQuery()) {
                // None: released or purged since; expired: lapsed since. Either way the claim runs again.
                return row.next() && row.getBoolean("live") ? calls.toResult(key, owner, row) : null;
            }
        }
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        // Each distinct key is claimed once, under its own owner; a key the batch repeats is a duplicate of that claim.
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        // A new batch for each transaction: the keys a rolled-back one found are not claimed any more. After a lost
        // reply the same owners claim again, so a row the lost attempt committed comes back as theirs.
        Connections.Work<Map<String, ClaimResult>> claimAll = calls.untilDecidedAnew("claimAll",
                () -> new MysqlClaimBatch(calls, table, ownerByKey, lease)::claimPending);
        return inInputOrder(keys, connections.runResending(claimAll, claimAll, "claimAll"));
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        MysqlCalls.Binder binder = statement -> {
            statement.setString(1, outcome.name());
            statement.setLong(2, MysqlCalls.micros(retention));
            statement.setBytes(3, result);
            calls.bindClaim(statement, 4, claim);
        };
        Connections.Work<Boolean> finish = calls.untilDecided("complete",
                connection -> calls.update(connection, sql.finish(), binder));
        // After a lost reply, a record already ended in this outcome by this owner was ended by the lost attempt.
        return connections.runResending(finish,
                connection -> finish.run(connection)
                        || LostReplies.endedIn(outcome, calls.stateOfOwner(connection, table, claim)),
                outcome == RecordState.FAILED ? "fail" : "complete");
    }

    @Override
    protected boolean doRelease(Claim claim) {
        Connections.Work<Boolean> release = calls.untilDecided("release",
                connection -> calls.update(connection, sql.release(),
                        statement -> calls.bindClaim(statement, 1, claim)));
        // After a lost reply, no record of this owner left means the lost attempt deleted it.
        return connections.runResending(release,
                connection -> release.run(connection) || calls.stateOfOwner(connection, table, claim) == null,
                "release");
    }

    @Override
    protected List<Boolean> doSettleAll(List<Settlement> settlements) {
        // After a lost reply, each settlement the rerun misses is read back as doFinish and doRelease read theirs.
        return connections.runResending(settleAll(settlements, false), settleAll(settlements, true), "settleAll");
    }

    private Connections.Work<List<Boolean>> settleAll(List<Settlement> settlements, boolean afterLostReply) {
        Connections.Work<List<Boolean>> settle = calls.untilDecidedAnew("settleAll", () -> new MysqlSettleBatch(calls,
                table, settlements, sql.finish(), sql.release(), afterLostReply, driverCountsBatches.get())::settle);
        return connection -> {
            if (driverCountsBatches.get() == null) {
                driverCountsBatches.set(MysqlSettleBatch.driverCountsBatches(connection, calls, table));
            }
            return settle.run(connection);
        };
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        // Moving the expiry again is harmless: resend as is.
        Connections.Work<Boolean> extend = calls.untilDecided("extend",
                connection -> calls.update(connection, sql.extend(), statement -> {
                    statement.setLong(1, MysqlCalls.micros(lease));
                    calls.bindClaim(statement, 2, claim);
                }));
        return connections.runResending(extend, extend, "extend");
    }

    @Override
    protected KeyRecord doInspect(String key) {
        // Reading twice is harmless, so a read whose reply was lost is simply made again.
        Connections.Work<KeyRecord> inspect = connection -> {
            try (PreparedStatement statement = calls.prepare(connection, table.inspect())) {
                statement.setBytes(1, calls.namespace);
                statement.setBytes(2, MysqlCalls.utf8(key));
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() ? calls.toRecord(key, row) : null;
                }
            }
        };
        return connections.runResending(inspect, inspect, "inspect");
    }

    @Override
    protected boolean doForget(String key) {
        // Never resent: after a lost reply a second delete finds nothing and would answer false for the record the
        // first one deleted. The caller gets the failure, and can inspect the key.
        return connections.run(calls.untilDecided("forget",
                connection -> calls.update(connection, table.forget(), statement -> {
                    statement.setBytes(1, calls.namespace);
                    statement.setBytes(2, MysqlCalls.utf8(key));
                })), "forget");
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    /** Settings for a {@link MysqlDedupStore}; each setter checks its value at once. */
    public static final class Builder extends SqlStoreBuilder<Builder, MysqlDedupStore> {
        private MysqlTable table = MysqlTable.parse(MysqlTable.DEFAULT_NAME);
        private String location;

        private Builder(DataSource dataSource) {
            super(dataSource);
        }

        /**
         * The table, {@code name} or {@code database.name} (default {@code dedup_claims}).
         *
         * @param table the table's name, optionally in another database than the connection's; several namespaces
         *     may share one table
         * @return this builder
         * @throws dev.dedup.DedupConfigurationException if a part is not letters, digits and underscores (first not a
         *     digit, at most 48): the name is put into SQL quoted but unescaped
         */
        @Override
        public Builder table(String table) {
            this.table = MysqlTable.parse(table);
            return this;
        }

        /** Where the DataSource connects, {@code host:port/database}, for messages: the provider knows it. */
        Builder location(String location) {
            this.location = location;
            return this;
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        protected MysqlDedupStore newStore() {
            MysqlErrors errors = new MysqlErrors(table, location);
            return new MysqlDedupStore(dataSource, new PooledConnections(dataSource, errors, timeout), table, errors,
                    Statements.of(table, true), Statements.of(table, false), namespace, timeout, onClose,
                    new AtomicReference<>());
        }

        /** Creates the table, purge procedure and event (see {@link MysqlDedupStore#createSchema()}). */
        @Override
        protected void createSchemaOf(MysqlDedupStore store) {
            store.createSchema();
        }

        @Override
        protected void validateSchemaOf(MysqlDedupStore store) {
            store.validateSchema();
        }
    }
}
