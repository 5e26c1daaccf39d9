package dev.dedup.examples.inventory;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * The transactional inbox on real tables: the dedup claim, the stock update and the reservation row commit or roll
 * back together. A crash before the commit loses all three, so the redelivery starts clean; a crash after the
 * commit (before the ack) makes the redelivery a duplicate that changes nothing.
 */
final class InventoryInbox implements SimulatedBroker.Subscriber {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofDays(1);

    private final DataSource dataSource;
    private final PostgresDedupStore store;
    private final String runId;
    private final CrashSwitch crashBeforeCommit;
    private int rolledBack;
    private int lostClaims;

    /** Decides, per delivery, whether the consumer "crashes" after its writes but before COMMIT. */
    interface CrashSwitch {
        boolean crashNow();
    }

    InventoryInbox(DataSource dataSource, PostgresDedupStore store, String runId, CrashSwitch crashBeforeCommit) {
        this.dataSource = dataSource;
        this.store = store;
        this.runId = runId;
        this.crashBeforeCommit = crashBeforeCommit;
    }

    static void createTables(DataSource dataSource) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS inbox_demo_stock (run_id text NOT NULL, sku text NOT NULL,"
                    + " reserved integer NOT NULL, PRIMARY KEY (run_id, sku))");
            statement.execute("CREATE TABLE IF NOT EXISTS inbox_demo_reservations (id bigserial PRIMARY KEY,"
                    + " run_id text NOT NULL, message_id text NOT NULL, order_id text NOT NULL, sku text NOT NULL,"
                    + " quantity integer NOT NULL)");
        }
    }

    @Override
    public boolean deliver(ReserveStock message, SimulatedBroker.Kind kind) {
        try (Connection transaction = dataSource.getConnection()) {
            transaction.setAutoCommit(false);
            DedupStore inbox = store.inTransaction(transaction);
            ClaimResult claimed = inbox.claim(message.messageId(), LEASE);
            if (!(claimed instanceof Claim claim)) {
                transaction.rollback();
                return true; // already reserved (or being reserved by a transaction that will commit): ack
            }
            long reservationId = reserve(transaction, message);
            if (!inbox.complete(claim, RETENTION, ("reservation-" + reservationId).getBytes(StandardCharsets.UTF_8))) {
                // Not this transaction's claim any more: committing would keep the writes without the record.
                transaction.rollback();
                lostClaims++;
                return false; // nack: the redelivery decides again
            }
            if (crashBeforeCommit.crashNow()) {
                transaction.rollback(); // the process died: the database rolls the whole transaction back
                rolledBack++;
                return false;
            }
            transaction.commit();
            return true;
        } catch (SQLException e) {
            throw new IllegalStateException("reserving " + message.messageId() + " failed", e);
        }
    }

    private long reserve(Connection transaction, ReserveStock message) throws SQLException {
        try (PreparedStatement stock = transaction.prepareStatement("INSERT INTO inbox_demo_stock (run_id, sku,"
                + " reserved) VALUES (?, ?, ?) ON CONFLICT (run_id, sku) DO UPDATE"
                + " SET reserved = inbox_demo_stock.reserved + EXCLUDED.reserved")) {
            stock.setString(1, runId);
            stock.setString(2, message.sku());
            stock.setInt(3, message.quantity());
            stock.executeUpdate();
        }
        try (PreparedStatement reservation = transaction.prepareStatement("INSERT INTO inbox_demo_reservations"
                + " (run_id, message_id, order_id, sku, quantity) VALUES (?, ?, ?, ?, ?) RETURNING id")) {
            reservation.setString(1, runId);
            reservation.setString(2, message.messageId());
            reservation.setString(3, message.orderId());
            reservation.setString(4, message.sku());
            reservation.setInt(5, message.quantity());
            try (ResultSet id = reservation.executeQuery()) {
                id.next();
                return id.getLong(1);
            }
        }
    }

    int rolledBack() {
        return rolledBack;
    }

    /** Deliveries whose complete() said the claim was no longer theirs: rolled back and nacked. */
    int lostClaims() {
        return lostClaims;
    }

    /** Reserved quantity per SKU as committed in the stock table. */
    Map<String, Long> reservedStock() throws SQLException {
        return perSku("SELECT sku, reserved FROM inbox_demo_stock WHERE run_id = ?");
    }

    /** Reservation rows per SKU: one per message if nothing ran twice. */
    Map<String, Long> reservationRows() throws SQLException {
        return perSku("SELECT sku, sum(quantity)::bigint FROM inbox_demo_reservations WHERE run_id = ? GROUP BY sku");
    }

    private Map<String, Long> perSku(String sql) throws SQLException {
        Map<String, Long> bySku = new TreeMap<>();
        try (Connection connection = dataSource.getConnection(); PreparedStatement query = connection.prepareStatement(sql)) {
            query.setString(1, runId);
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    bySku.put(rows.getString(1), rows.getLong(2));
                }
            }
        }
        return bySku;
    }
}
