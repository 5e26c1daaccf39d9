package dev.dedup.store.postgres;

import dev.dedup.Settlement;
import dev.dedup.jdbc.LostReplies;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.postgresql.PGStatement;

/**
 * One {@code settleAll} on PostgreSQL: the whole batch as arrays bound to one statement
 * ({@link PostgresTable#settleAll}), and its answers read back into the batch's order.
 */
final class PostgresSettleBatch {
    private final String namespace;
    private final List<Settlement> settlements;
    private final int timeoutSeconds;

    PostgresSettleBatch(String namespace, List<Settlement> settlements, int timeoutSeconds) {
        this.namespace = namespace;
        this.settlements = settlements;
        this.timeoutSeconds = timeoutSeconds;
    }

    /** Runs the batch's statement; {@return one answer per settlement, in input order} */
    List<Boolean> settle(Connection connection, String settleSql) throws SQLException {
        Set<String> settled = settledKeys(connection, settleSql);
        List<Boolean> answers = new ArrayList<>(settlements.size());
        for (Settlement settlement : settlements) {
            answers.add(settled.contains(settlement.claim().key()));
        }
        return answers;
    }

    /**
     * Runs the batch again after its reply was lost, and reads what the lost attempt did where this run settled
     * nothing: by the rule of each single call, a complete or fail whose owner's record is in the state asked for,
     * or a release whose owner has no record left, was settled by the lost attempt.
     */
    List<Boolean> settleAfterLostReply(Connection connection, String settleSql, String statesSql)
            throws SQLException {
        Set<String> settled = settledKeys(connection, settleSql);
        List<Settlement> unsettled = settlements.stream()
                .filter(settlement -> !settled.contains(settlement.claim().key())).toList();
        Map<String, String> states = unsettled.isEmpty() ? Map.of() : statesOfOwners(connection, statesSql, unsettled);
        List<Boolean> answers = new ArrayList<>(settlements.size());
        for (Settlement settlement : settlements) {
            String key = settlement.claim().key();
            answers.add(settled.contains(key) || LostReplies.settledBefore(settlement, states.get(key)));
        }
        return answers;
    }

    private Set<String> settledKeys(Connection connection, String settleSql) throws SQLException {
        int size = settlements.size();
        String[] keys = new String[size];
        String[] owners = new String[size];
        String[] states = new String[size];
        Long[] retentions = new Long[size];
        byte[][] results = new byte[size][];
        for (int i = 0; i < size; i++) {
            Settlement settlement = settlements.get(i);
            keys[i] = settlement.claim().key();
            owners[i] = settlement.claim().owner();
            if (settlement.kind() != Settlement.Kind.RELEASE) {
                states[i] = settlement.endState().name();
                retentions[i] = settlement.retention().toMillis();
                results[i] = settlement.payload();
            }
        }
        try (PreparedStatement statement = connection.prepareStatement(settleSql)) {
            planEachRun(statement);
            statement.setQueryTimeout(timeoutSeconds);
            statement.setString(1, namespace);
            statement.setArray(2, connection.createArrayOf("text", keys));
            statement.setArray(3, connection.createArrayOf("text", owners));
            statement.setArray(4, connection.createArrayOf("text", states));
            statement.setArray(5, connection.createArrayOf("bigint", retentions));
            statement.setArray(6, connection.createArrayOf("bytea", results));
            Set<String> settled = new HashSet<>();
            try (ResultSet row = statement.executeQuery()) {
                while (row.next()) {
                    settled.add(row.getString(1));
                }
            }
            return settled;
        }
    }

    /**
     * Has the server plan the statement at each run rather than keep a generic plan for the connection. A generic
     * plan made while the table was small reads every row of the namespace to find the batch's keys (a bitmap scan
     * on the namespace, the keys a filter) until the next ANALYZE replans it: measured, a batch of 100 took 10 to
     * 13 ms on a table grown from empty to 24,000 rows, against 5 to 7 ms once replanned. Planning anew costs about
     * a millisecond and always probes the primary key. A driver other than PostgreSQL's keeps its own ways.
     */
    private static void planEachRun(PreparedStatement statement) throws SQLException {
        if (statement.isWrapperFor(PGStatement.class)) {
            statement.unwrap(PGStatement.class).setPrepareThreshold(0);
        }
    }

    /** Each key's state where its settlement's owner holds or held the record. */
    private Map<String, String> statesOfOwners(Connection connection, String statesSql, List<Settlement> batch)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(statesSql)) {
            statement.setQueryTimeout(timeoutSeconds);
            statement.setArray(1, connection.createArrayOf("text",
                    batch.stream().map(settlement -> settlement.claim().key()).toArray()));
            statement.setArray(2, connection.createArrayOf("text",
                    batch.stream().map(settlement -> settlement.claim().owner()).toArray()));
            statement.setString(3, namespace);
            Map<String, String> states = new HashMap<>();
            try (ResultSet row = statement.executeQuery()) {
                while (row.next()) {
                    states.put(row.getString(1), row.getString(2));
                }
            }
            return states;
        }
    }
}
