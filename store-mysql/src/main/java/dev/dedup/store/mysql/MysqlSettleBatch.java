package dev.dedup.store.mysql;

import dev.dedup.Settlement;
import dev.dedup.jdbc.LostReplies;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code settleAll}: the completes and fails as one JDBC batch of the single-call UPDATE, the releases as one of
 * the single-call DELETE, so each settlement keeps its single call's rule and gets its own row count. The drivers send
 * a batch's statements together (MariaDB Connector/J pipelines them: one round trip). Each batch goes in key order,
 * so that two batches lock common keys in the same order.
 */
final class MysqlSettleBatch {
    private static final Comparator<Settlement> INDEX_ORDER = (a, b) -> Arrays.compareUnsigned(
            MysqlCalls.utf8(a.claim().key()), MysqlCalls.utf8(b.claim().key()));

    private final MysqlCalls calls;
    private final MysqlTable table;
    private final List<Settlement> settlements;
    private final String finishSql;
    private final String releaseSql;
    /** Set by the first run: a later one follows a lost reply or a deadlock, and reads back what it misses. */
    private boolean ranBefore;

    MysqlSettleBatch(MysqlCalls calls, MysqlTable table, List<Settlement> settlements, String finishSql,
            String releaseSql) {
        this.calls = calls;
        this.table = table;
        this.settlements = settlements;
        this.finishSql = finishSql;
        this.releaseSql = releaseSql;
    }

    /**
     * Runs the batch; {@return one answer per settlement, in input order} After a lost reply or a deadlock (a
     * second run), a settlement the run did not settle is read back: the earlier attempt may have settled it.
     * So is one whose row count the driver did not report ({@link Statement#SUCCESS_NO_INFO}, a driver's bulk mode).
     */
    List<Boolean> settle(Connection connection) throws SQLException {
        boolean again = ranBefore;
        ranBefore = true;
        List<Settlement> finishes = settlements.stream().filter(s -> s.kind() != Settlement.Kind.RELEASE)
                .sorted(INDEX_ORDER).toList();
        List<Settlement> releases = settlements.stream().filter(s -> s.kind() == Settlement.Kind.RELEASE)
                .sorted(INDEX_ORDER).toList();
        int[] finished = run(connection, finishSql, finishes, (statement, settlement) -> {
            statement.setString(1, settlement.endState().name());
            statement.setLong(2, MysqlCalls.micros(settlement.retention()));
            statement.setBytes(3, settlement.payload());
            calls.bindClaim(statement, 4, settlement.claim());
        });
        int[] released = run(connection, releaseSql, releases,
                (statement, settlement) -> calls.bindClaim(statement, 1, settlement.claim()));
        Map<Settlement, Integer> counts = new IdentityHashMap<>();
        for (int i = 0; i < finishes.size(); i++) {
            counts.put(finishes.get(i), finished[i]);
        }
        for (int i = 0; i < releases.size(); i++) {
            counts.put(releases.get(i), released[i]);
        }
        List<Boolean> answers = new ArrayList<>(settlements.size());
        for (Settlement settlement : settlements) {
            int count = counts.get(settlement);
            boolean unknown = count == Statement.SUCCESS_NO_INFO || (again && count == 0);
            answers.add(count > 0 || unknown && LostReplies.settledBefore(settlement,
                    calls.stateOfOwner(connection, table, settlement.claim())));
        }
        return answers;
    }

    private interface Binding {
        void bind(PreparedStatement statement, Settlement settlement) throws SQLException;
    }

    private int[] run(Connection connection, String sql, List<Settlement> batch, Binding binding)
            throws SQLException {
        if (batch.isEmpty()) {
            return new int[0];
        }
        try (PreparedStatement statement = calls.prepare(connection, sql)) {
            for (Settlement settlement : batch) {
                binding.bind(statement, settlement);
                statement.addBatch();
            }
            return statement.executeBatch();
        }
    }
}
