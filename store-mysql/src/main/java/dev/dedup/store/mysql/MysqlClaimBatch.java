package dev.dedup.store.mysql;

import dev.dedup.ClaimResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code claimAll}: the distinct keys' claim statement ({@link MysqlTable#claimMany}), then one read of their rows,
 * each key won where its row carries the owner this batch gave it. Keys whose row changed between the two (released,
 * purged, expired) are claimed again, alone with the others still pending. What it found holds for one transaction
 * only: a call makes a new batch for each (see {@link MysqlCalls#untilDecidedAnew}).
 */
final class MysqlClaimBatch {
    /** VARBINARY's order: unsigned bytes, so that every batch locks common keys in the index's order. */
    private static final Comparator<String> INDEX_ORDER =
            (a, b) -> Arrays.compareUnsigned(MysqlCalls.utf8(a), MysqlCalls.utf8(b));

    private final MysqlCalls calls;
    private final MysqlTable table;
    private final Map<String, String> ownerByKey;
    private final long leaseMicros;
    private final Map<String, ClaimResult> found = new HashMap<>();

    MysqlClaimBatch(MysqlCalls calls, MysqlTable table, Map<String, String> ownerByKey, Duration lease) {
        this.calls = calls;
        this.table = table;
        this.ownerByKey = ownerByKey;
        this.leaseMicros = MysqlCalls.micros(lease);
    }

    /** Claims the keys not decided yet; {@return every key's result once all are decided, else null} */
    Map<String, ClaimResult> claimPending(Connection connection) throws SQLException {
        List<String> pending = ownerByKey.keySet().stream().filter(key -> !found.containsKey(key))
                .sorted(INDEX_ORDER).toList();
        try (PreparedStatement statement = calls.prepare(connection, table.claimMany(pending.size()))) {
            int parameter = 1;
            for (String key : pending) {
                statement.setBytes(parameter++, calls.namespace);
                statement.setBytes(parameter++, MysqlCalls.utf8(key));
                statement.setBytes(parameter++, MysqlCalls.utf8(ownerByKey.get(key)));
                statement.setLong(parameter++, leaseMicros);
                statement.setNull(parameter++, java.sql.Types.VARBINARY); // a batch stores no fingerprint
            }
            statement.executeUpdate();
        }
        try (PreparedStatement statement = calls.prepare(connection, table.readMany(pending.size()))) {
            statement.setBytes(1, calls.namespace);
            int parameter = 2;
            for (String key : pending) {
                statement.setBytes(parameter++, MysqlCalls.utf8(key));
            }
            try (ResultSet row = statement.executeQuery()) {
                while (row.next()) {
                    if (row.getBoolean("live")) {
                        String key = MysqlCalls.text(row.getBytes("key"));
                        found.put(key, calls.toResult(key, ownerByKey.get(key), row));
                    }
                }
            }
        }
        return found.size() == ownerByKey.size() ? found : null;
    }
}
