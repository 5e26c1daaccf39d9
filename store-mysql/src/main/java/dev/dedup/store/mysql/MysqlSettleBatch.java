package dev.dedup.store.mysql;

import dev.dedup.Settlement;
import dev.dedup.jdbc.LostReplies;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One {@code settleAll}: the completes and fails as one JDBC batch of the single-call UPDATE, the releases as one of
 * the single-call DELETE, so each settlement keeps its single call's rule and gets its own row count. The drivers send
 * a batch's statements together (MariaDB Connector/J pipelines them: one round trip). Each batch goes in key order,
 * so that two batches lock common keys in the same order.
 *
 * <p>A row count answers a settlement. A settlement without one is read back as a single call reads back after a
 * lost reply (the row its owner holds or held says whether it was settled): each after a lost reply, since the lost
 * attempt may have settled it, and one whose statement a batch that then failed may or may not have run. The
 * settlements a failed batch did count keep their answers (with auto-commit each statement commits on its own), so
 * a rerun after a deadlock or lock wait settles only the rest; without auto-commit the rerun is a new batch, as the
 * rollback undid them. A driver that reports no counts for batches ({@link Statement#SUCCESS_NO_INFO}, a bulk mode)
 * gets its statements one at a time instead.
 */
final class MysqlSettleBatch {
    private static final Comparator<Settlement> INDEX_ORDER = (a, b) -> Arrays.compareUnsigned(
            MysqlCalls.utf8(a.claim().key()), MysqlCalls.utf8(b.claim().key()));

    private final MysqlCalls calls;
    private final MysqlTable table;
    private final List<Settlement> settlements;
    private final String finishSql;
    private final String releaseSql;
    private final boolean countsBatches;
    private final Map<Settlement, Boolean> answers = new IdentityHashMap<>();
    /** Settlements an earlier attempt may have settled, so that a count of 0 is read back. */
    private final Set<Settlement> maybeSettled = Collections.newSetFromMap(new IdentityHashMap<>());

    /**
     * @param afterLostReply true for the resend after a lost reply: every settlement may be settled already
     * @param countsBatches false when the driver reports no row counts for a batch: then one statement at a time
     */
    MysqlSettleBatch(MysqlCalls calls, MysqlTable table, List<Settlement> settlements, String finishSql,
            String releaseSql, boolean afterLostReply, boolean countsBatches) {
        this.calls = calls;
        this.table = table;
        this.settlements = settlements;
        this.finishSql = finishSql;
        this.releaseSql = releaseSql;
        this.countsBatches = countsBatches;
        if (afterLostReply) {
            maybeSettled.addAll(settlements);
        }
    }

    /** Runs the settlements not answered yet; {@return one answer per settlement, in input order} */
    List<Boolean> settle(Connection connection) throws SQLException {
        List<Settlement> open = settlements.stream().filter(s -> !answers.containsKey(s)).sorted(INDEX_ORDER).toList();
        run(connection, finishSql, open.stream().filter(s -> s.kind() != Settlement.Kind.RELEASE).toList(),
                (statement, settlement) -> {
                    statement.setString(1, settlement.endState().name());
                    statement.setLong(2, MysqlCalls.micros(settlement.retention()));
                    statement.setBytes(3, settlement.payload());
                    calls.bindClaim(statement, 4, settlement.claim());
                });
        run(connection, releaseSql, open.stream().filter(s -> s.kind() == Settlement.Kind.RELEASE).toList(),
                (statement, settlement) -> calls.bindClaim(statement, 1, settlement.claim()));
        return settlements.stream().map(answers::get).toList();
    }

    private interface Binding {
        void bind(PreparedStatement statement, Settlement settlement) throws SQLException;
    }

    private void run(Connection connection, String sql, List<Settlement> batch, Binding binding)
            throws SQLException {
        if (batch.isEmpty()) {
            return;
        }
        try (PreparedStatement statement = calls.prepare(connection, sql)) {
            if (!countsBatches) {
                for (Settlement settlement : batch) {
                    binding.bind(statement, settlement);
                    answer(connection, settlement, statement.executeUpdate());
                }
                return;
            }
            for (Settlement settlement : batch) {
                binding.bind(statement, settlement);
                statement.addBatch();
            }
            int[] counts;
            try {
                counts = statement.executeBatch();
            } catch (SQLException e) {
                if (connection.getAutoCommit()) {
                    keepCounted(batch, e instanceof BatchUpdateException counted ? counted.getUpdateCounts()
                            : new int[0]);
                }
                throw e;
            }
            for (int i = 0; i < batch.size(); i++) {
                answer(connection, batch.get(i), counts[i]);
            }
        }
    }

    /**
     * After a batch failed: keeps the answers it counted. A statement it did not report (a driver may stop at the
     * failure while the server runs the rest) may have run, and is read back if its rerun counts 0.
     */
    private void keepCounted(List<Settlement> batch, int[] counts) {
        for (int i = 0; i < batch.size(); i++) {
            Settlement settlement = batch.get(i);
            int count = i < counts.length ? counts[i] : Statement.SUCCESS_NO_INFO;
            if (count > 0 || count == 0 && !maybeSettled.contains(settlement)) {
                answers.put(settlement, count > 0);
            } else if (count == Statement.SUCCESS_NO_INFO) {
                maybeSettled.add(settlement);
            }
        }
    }

    /**
     * {@return whether the driver reports a row count for each statement of a batch} Asked once per store, with a
     * batch of two statements that touch no row.
     */
    static boolean driverCountsBatches(Connection connection, MysqlCalls calls, MysqlTable table)
            throws SQLException {
        try (PreparedStatement statement = calls.prepare(connection, table.deleteNothing())) {
            for (int i = 0; i < 2; i++) {
                statement.setBytes(1, calls.namespace);
                statement.addBatch();
            }
            return Arrays.stream(statement.executeBatch()).noneMatch(count -> count == Statement.SUCCESS_NO_INFO);
        }
    }

    private void answer(Connection connection, Settlement settlement, int count) throws SQLException {
        boolean readBack = count == Statement.SUCCESS_NO_INFO || count == 0 && maybeSettled.contains(settlement);
        answers.put(settlement, count > 0 || readBack && LostReplies.settledBefore(settlement,
                calls.stateOfOwner(connection, table, settlement.claim())));
    }
}
