package dev.dedup.store.mysql;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.jdbc.Connections;
import dev.dedup.spi.ContentionRetry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

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
        return connection -> {
            ContentionRetry retry = ContentionRetry.within(timeout);
            while (true) {
                try {
                    T decided = attempt.run(connection);
                    if (decided != null) {
                        return decided;
                    }
                } catch (SQLException e) {
                    if (!rerunsContention || !MysqlErrors.isContention(e) || retry.remainingNanos() == 0) {
                        throw e;
                    }
                    if (!connection.getAutoCommit()) {
                        connection.rollback(); // a pool without auto-commit: the transaction is this call's own
                    }
                }
                retry.pauseOrGiveUp(STORE + " (namespace '" + namespaceName + "')", operation);
            }
        };
    }

    PreparedStatement prepare(Connection connection, String sql) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        statement.setQueryTimeout(timeoutSeconds);
        return statement;
    }

    PreparedStatement prepare(Connection connection, String sql, int generatedKeys) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql, generatedKeys);
        statement.setQueryTimeout(timeoutSeconds);
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
