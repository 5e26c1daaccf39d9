package dev.dedup.store.postgres;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.DedupStore;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * A {@link DedupStore} on PostgreSQL. Each claim is one statement and one round trip: insert the key, or take over
 * its expired row, or report the live row (see {@link PostgresTable#claim()}). Expiry is decided by the server's
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
public final class PostgresDedupStore extends AbstractDedupStore {
    /** A claim's statement sees no row only when a concurrent commit raced it; a rerun sees that commit. */
    private static final int CLAIM_ATTEMPTS = 3;

    /** The SQL of every operation, built once per table and shared with the {@link #inTransaction} views. */
    private record Statements(String claim, String claimAll, String complete, String release, String extend) {
        static Statements of(PostgresTable table) {
            return new Statements(table.claim(), table.claimAll(), table.complete(), table.release(), table.extend());
        }
    }

    private final Connections connections;
    private final PostgresTable table;
    private final Statements sql;
    private final int timeoutSeconds;
    private final Runnable onClose;

    private PostgresDedupStore(Connections connections, PostgresTable table, Statements sql, String namespace,
            int timeoutSeconds, Runnable onClose) {
        super(namespace);
        this.connections = connections;
        this.table = table;
        this.sql = sql;
        this.timeoutSeconds = timeoutSeconds;
        this.onClose = onClose;
    }

    /** Starts a store on the application's {@link DataSource} (a pool, ideally). */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * The same store bound to the caller's open {@code transaction}: claims, completions and releases run on that
     * connection and are never committed here, so they commit or roll back with the caller's business writes.
     * A rollback frees the key; a concurrent delivery in another transaction waits for this one and then sees the
     * record as a duplicate. Use READ COMMITTED (PostgreSQL's default); under REPEATABLE READ or SERIALIZABLE a
     * concurrent delivery fails with a retryable {@link DedupStoreException} instead. Closing the view does nothing.
     */
    public DedupStore inTransaction(Connection transaction) {
        Objects.requireNonNull(transaction, "transaction");
        return new PostgresDedupStore(new CallerTransaction(transaction), table, sql, namespace(), timeoutSeconds,
                () -> {});
    }

    /** Creates the table, its expiry index, the purge procedure and, where pg_cron allows, the purge job. */
    public PostgresSchemaReport createSchema() {
        return createSchema(null);
    }

    /**
     * As {@link #createSchema()}, scheduling the job through {@code cronDatabase} (a DataSource for the database
     * named by {@code cron.database_name}) when pg_cron lives in another database than the table.
     */
    public PostgresSchemaReport createSchema(DataSource cronDatabase) {
        return connections.run(connection -> PostgresSchema.create(connection, table, cronDatabase), "createSchema",
                table);
    }

    /** Checks that the table exists with the expected columns; a difference fails with the DDL to fix it. */
    public void validateSchema() {
        connections.run(connection -> {
            PostgresSchema.validate(connection, table);
            return null;
        }, "validateSchema", table);
    }

    /**
     * Deletes up to {@code batchSize} expired rows, of every namespace, and returns how many: the purge to schedule
     * yourself where pg_cron is not available. Rows a claim is taking over are skipped, not waited for.
     */
    public int purgeExpired(int batchSize) {
        if (batchSize < 1 || batchSize > 100_000) {
            throw new IllegalArgumentException("batchSize must be in [1, 100000], but was " + batchSize);
        }
        return connections.run(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(table.purgeBatch("?"))) {
                statement.setQueryTimeout(timeoutSeconds);
                statement.setInt(1, batchSize);
                return statement.executeUpdate();
            }
        }, "purgeExpired", table);
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease) {
        return connections.run(connection -> {
            for (int attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
                try (PreparedStatement statement = connection.prepareStatement(sql.claim())) {
                    statement.setQueryTimeout(timeoutSeconds);
                    statement.setString(1, namespace());
                    statement.setString(2, key);
                    statement.setString(3, owner);
                    statement.setLong(4, lease.toMillis());
                    try (ResultSet row = statement.executeQuery()) {
                        if (row.next()) {
                            return toResult(key, owner, row);
                        }
                    }
                }
            }
            throw racedTooOften(key);
        }, "claim", table);
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        // The statement takes each distinct key once; repeats in the batch are duplicates of the first.
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        Map<String, ClaimResult> byKey = connections.run(connection -> {
            Map<String, ClaimResult> found = new HashMap<>();
            for (int attempt = 1; attempt <= CLAIM_ATTEMPTS && found.size() < ownerByKey.size(); attempt++) {
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
            }
            if (found.size() < ownerByKey.size()) {
                throw racedTooOften(ownerByKey.keySet().stream().filter(k -> !found.containsKey(k)).findFirst()
                        .orElseThrow());
            }
            return found;
        }, "claimAll", table);

        return inInputOrder(keys, byKey);
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        return update(sql.complete(), outcome == RecordState.FAILED ? "fail" : "complete", statement -> {
            statement.setString(1, outcome.name());
            statement.setLong(2, retention.toMillis());
            statement.setBytes(3, result);
            statement.setString(4, namespace());
            statement.setString(5, claim.key());
            statement.setString(6, claim.owner());
        });
    }

    @Override
    protected boolean doRelease(Claim claim) {
        return update(sql.release(), "release", statement -> {
            statement.setString(1, namespace());
            statement.setString(2, claim.key());
            statement.setString(3, claim.owner());
        });
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        return update(sql.extend(), "extend", statement -> {
            statement.setLong(1, lease.toMillis());
            statement.setString(2, namespace());
            statement.setString(3, claim.key());
            statement.setString(4, claim.owner());
        });
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    private interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    private boolean update(String sql, String operation, Binder binder) {
        return connections.run(connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
                statement.setQueryTimeout(timeoutSeconds);
                binder.bind(statement);
                return statement.executeUpdate() == 1;
            }
        }, operation, table);
    }

    private ClaimResult toResult(String key, String owner, ResultSet row) throws SQLException {
        Timestamp expiresAt = row.getTimestamp("expires_at");
        if (owner.equals(row.getString("owner"))) {
            return new Claim(namespace(), key, owner, expiresAt.toInstant());
        }
        return new Duplicate(key, RecordState.valueOf(row.getString("state")), expiresAt.toInstant(),
                row.getBytes("result"));
    }

    private DedupStoreException racedTooOften(String key) {
        return new DedupStoreException("PostgreSQL dedup store claim in namespace '" + namespace() + "' raced a"
                + " concurrent transaction " + CLAIM_ATTEMPTS + " times without seeing its row (" + key.length()
                + "-char key); under REPEATABLE READ or SERIALIZABLE, retry the whole transaction", null, true);
    }

    /** Settings for a {@link PostgresDedupStore}; each setter checks its value at once. */
    public static final class Builder {
        private final DataSource dataSource;
        private PostgresTable table = PostgresTable.parse(PostgresTable.DEFAULT_NAME);
        private String namespace = DedupLimits.DEFAULT_NAMESPACE;
        private Duration timeout = Duration.ofSeconds(5);
        private boolean validateSchema = true;
        private Runnable onClose = () -> {};

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** The table, {@code name} or {@code schema.name} (default {@code dedup_claims}). */
        public Builder table(String table) {
            this.table = PostgresTable.parse(table);
            return this;
        }

        public Builder namespace(String namespace) {
            this.namespace = DedupLimits.checkNamespace(namespace);
            return this;
        }

        /**
         * How long one operation may take before it fails with a retryable {@link DedupStoreException} (default
         * 5 s, whole seconds, as JDBC counts). Bound the wait for a connection in your pool's own settings.
         */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.compareTo(Duration.ofSeconds(1)) < 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("timeout must be in [PT1S, PT10M], but was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** Whether {@link #build()} checks the table's columns (default true; one query at start-up). */
        public Builder validateSchema(boolean validateSchema) {
            this.validateSchema = validateSchema;
            return this;
        }

        /** Runs when the store closes: the provider closes the pool it created. */
        Builder onClose(Runnable onClose) {
            this.onClose = onClose;
            return this;
        }

        public PostgresDedupStore build() {
            // JDBC counts query timeouts in whole seconds: round up.
            int timeoutSeconds = (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
            PostgresDedupStore store = new PostgresDedupStore(new PooledConnections(dataSource), table,
                    Statements.of(table), namespace, timeoutSeconds, onClose);
            if (validateSchema) {
                store.validateSchema();
            }
            return store;
        }
    }
}
