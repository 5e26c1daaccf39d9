package dev.dedup.store.mysql;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.jdbc.Connections;
import dev.dedup.jdbc.PooledConnections;
import dev.dedup.spi.ContentionRetry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What every statement of one store shares: binding keys and owners as UTF-8 bytes, the query timeout, reading a row
 * into a result, and rerunning a statement that InnoDB rolled back to break a deadlock.
 */
final class MysqlCalls {
    private static final String STORE = "MySQL dedup store";

    /** The namespace as the bytes of its column. */
    final byte[] namespace;
    private final String namespaceName;
    private final int timeoutSeconds;
    private final Duration timeout;
    /** False inside the caller's transaction: a deadlock rolled back the caller's work, which only it can redo. */
    private final boolean rerunsContention;
    /**
     * The query timeout of the attempt running on this thread (JDBC blocks the caller's thread for a call), so that
     * the statements of a rerun get only what is left of the call's budget.
     */
    private final ThreadLocal<Integer> attemptSeconds = new ThreadLocal<>();

    MysqlCalls(String namespace, int timeoutSeconds, Duration timeout, boolean rerunsContention) {
        this.namespace = utf8(namespace);
        this.namespaceName = namespace;
        this.timeoutSeconds = timeoutSeconds;
        this.timeout = timeout;
        this.rerunsContention = rerunsContention;
    }

    /** One attempt of a statement or two; null when it met a row that changed meanwhile and must run again. */
    interface Attempt<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * Runs {@code attempt} until it decides, rerunning it after a deadlock or a lock wait timeout and after a race it
     * reports as null, paced by {@link ContentionRetry} and never past the store's timeout: the claim of a hot key
     * never loops for ever, and never fails while another writer is making progress.
     */
    <T> Connections.Work<T> untilDecided(String operation, Attempt<T> attempt) {
        return untilDecidedAnew(operation, () -> attempt);
    }

    /**
     * {@link #untilDecided}, for an attempt that keeps what it learnt between runs: {@code newAttempt} makes a new
     * one for each transaction (each run of the work, and after a rollback), since what a rolled-back transaction
     * learnt is no longer so. Each statement's query timeout is the call's budget left, in whole seconds rounded up;
     * after a deadlock or lock wait with less than a second left, the call ends with that error.
     */
    <T> Connections.Work<T> untilDecidedAnew(String operation, Supplier<Attempt<T>> newAttempt) {
        return connection -> {
            ContentionRetry retry = ContentionRetry.within(timeout);
            Attempt<T> attempt = newAttempt.get();
            while (true) {
                attemptSeconds.set(retry.attempts() == 1 ? timeoutSeconds
                        : PooledConnections.wholeSeconds(Duration.ofNanos(retry.remainingNanos())));
                try {
                    T decided = attempt.run(connection);
                    if (decided != null) {
                        return decided;
                    }
                } catch (SQLException e) {
                    if (!rerunsContention || !MysqlErrors.isContention(e)
                            || retry.remainingNanos() < TimeUnit.SECONDS.toNanos(1)) {
                        throw e;
                    }
                    if (!connection.getAutoCommit()) {
                        connection.rollback(); // a pool without auto-commit: the transaction is this call's own
                        attempt = newAttempt.get();
                    }
                } finally {
                    attemptSeconds.remove();
                }
                retry.pauseOrGiveUp(STORE + " (namespace '" + namespaceName + "')", operation);
            }
        };
    }

    PreparedStatement prepare(Connection connection, String sql) throws SQLException {
        return bounded(connection.prepareStatement(sql));
    }

    PreparedStatement prepare(Connection connection, String sql, int generatedKeys) throws SQLException {
        return bounded(connection.prepareStatement(sql, generatedKeys));
    }

    /** The statement's query timeout: the attempt's share of the budget inside {@link #untilDecided}, else all of it. */
    private PreparedStatement bounded(PreparedStatement statement) throws SQLException {
        Integer seconds = attemptSeconds.get();
        statement.setQueryTimeout(seconds == null ? timeoutSeconds : seconds);
        return statement;
    }

    interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    /** Runs one UPDATE or DELETE; {@return whether it changed a row} */
    boolean update(Connection connection, String sql, Binder binder) throws SQLException {
        try (PreparedStatement statement = prepare(connection, sql)) {
            binder.bind(statement);
            return statement.executeUpdate() > 0;
        }
    }

    /** Binds namespace, key and owner of {@code claim} from parameter {@code first} on. */
    void bindClaim(PreparedStatement statement, int first, Claim claim) throws SQLException {
        statement.setBytes(first, namespace);
        statement.setBytes(first + 1, utf8(claim.key()));
        statement.setBytes(first + 2, utf8(claim.owner()));
    }

    /** The state of the claim's record if its owner still holds or held it, else null. */
    String stateOfOwner(Connection connection, MysqlTable table, Claim claim) throws SQLException {
        try (PreparedStatement statement = prepare(connection, table.stateOfOwner())) {
            bindClaim(statement, 1, claim);
            try (ResultSet row = statement.executeQuery()) {
                return row.next() ? row.getString(1) : null;
            }
        }
    }

    /** The claim if the row carries {@code owner}, else a duplicate of the row. */
    ClaimResult toResult(String key, String owner, ResultSet row) throws SQLException {
        Instant expiresAt = instant(row.getLong("expires_us"));
        if (owner.equals(text(row.getBytes("owner")))) {
            return new Claim(namespaceName, key, owner, expiresAt);
        }
        return new Duplicate(key, RecordState.valueOf(row.getString("state")), expiresAt, row.getBytes("result"),
                row.getBytes("fingerprint"));
    }

    KeyRecord toRecord(String key, ResultSet row) throws SQLException {
        return new KeyRecord(key, RecordState.valueOf(row.getString("state")), instant(row.getLong("expires_us")),
                text(row.getBytes("owner")), row.getBytes("fingerprint"), row.getBytes("result"));
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] utf8) {
        return new String(utf8, StandardCharsets.UTF_8);
    }

    /** A lease or retention in the table's unit. */
    static long micros(Duration duration) {
        return duration.toNanos() / 1_000;
    }

    static Instant instant(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }
}
