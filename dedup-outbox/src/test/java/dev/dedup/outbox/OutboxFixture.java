package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What a test class parametrized over the database needs: a pool per database, opened at its first use and closed
 * with the fixture (after the class), and outboxes made for one test, each on a table of its own, dropped after it.
 */
final class OutboxFixture implements AutoCloseable {
    private final int poolSize;
    private final Map<TestDatabase, HikariDataSource> pools = new EnumMap<>(TestDatabase.class);
    private final Map<Outbox, TestDatabase> outboxes = new IdentityHashMap<>();

    OutboxFixture(int poolSize) {
        this.poolSize = poolSize;
    }

    synchronized HikariDataSource pool(TestDatabase database) {
        return pools.computeIfAbsent(database, db -> db.pool(poolSize));
    }

    /** A new outbox on a table of its own, its schema created. */
    Outbox outbox(TestDatabase database) {
        return outbox(database, builder -> builder);
    }

    /** As {@link #outbox(TestDatabase)}, with settings of the test's own. */
    synchronized Outbox outbox(TestDatabase database, UnaryOperator<Outbox.Builder> settings) {
        Outbox outbox = settings.apply(Outbox.builder(pool(database)).table(unique("outbox"))).build();
        outboxes.put(outbox, database);
        outbox.createSchema();
        return outbox;
    }

    /** Drops every outbox made since the last call: after each test. */
    synchronized void dropOutboxes() {
        outboxes.keySet().forEach(outbox -> outbox.dropSchema(null));
        outboxes.clear();
    }

    @Override
    public synchronized void close() {
        dropOutboxes();
        pools.values().forEach(HikariDataSource::close);
        pools.clear();
    }

    /** What the table holds about an event's failures, as a user inspecting it with SQL sees it. */
    record Attempts(int attempts, boolean parked, String lastError) {}

    synchronized Attempts attempts(Outbox outbox, String messageId) throws SQLException {
        TestDatabase database = outboxes.get(outbox);
        try (Connection db = pool(database).getConnection(); PreparedStatement select = db.prepareStatement(
                "SELECT attempts, parked_at IS NOT NULL, last_error FROM " + outbox.table()
                        + " WHERE message_id = " + database.messageIdParameter())) {
            select.setString(1, messageId);
            try (ResultSet row = select.executeQuery()) {
                if (!row.next()) {
                    throw new AssertionError("no outbox row for message-id " + messageId);
                }
                return new Attempts(row.getInt(1), row.getBoolean(2), row.getString(3));
            }
        }
    }
}
