package dev.dedup.examples.inventory;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * The inventory reservation through the PostgreSQL transactional inbox: an at-least-once broker duplicates and
 * redelivers, the consumer crashes both before COMMIT and between COMMIT and ack, and the stock table still ends
 * exactly right. Argument: a JDBC URL, for example {@code jdbc:postgresql://127.0.0.1:15432/dedup?user=postgres}.
 */
public final class InventoryInboxDemo {
    private InventoryInboxDemo() {}

    /** What one run left in the database, against the exact expectation. */
    record Result(int published, int deliveries, int duplicatePublishes, int crashesAfterCommit, int crashesBeforeCommit,
            Map<String, Long> expected, Map<String, Long> stock, Map<String, Long> reservations) {
        boolean exact() {
            return expected.equals(stock) && expected.equals(reservations);
        }
    }

    public static void main(String[] args) throws SQLException {
        if (args.length != 1) {
            System.err.println("usage: InventoryInboxDemo <jdbc:postgresql://host:port/db?user=...>");
            System.exit(2);
        }
        Result result = run(args[0], 1_000, 42);
        System.out.printf("transactional inbox demo on PostgreSQL%n"
                        + "  messages published     %,d (%,d duplicate publishes)%n"
                        + "  deliveries             %,d%n"
                        + "  crashes before COMMIT  %,d (rolled back: claim and writes together)%n"
                        + "  crashes after COMMIT   %,d (ack lost: redelivered, then a duplicate)%n"
                        + "  stock table            %s%n"
                        + "  reservation rows       %s%n"
                        + "  expected               %s%n"
                        + "  %s%n",
                result.published(), result.duplicatePublishes(), result.deliveries(), result.crashesBeforeCommit(),
                result.crashesAfterCommit(), total(result.stock()), total(result.reservations()),
                total(result.expected()), result.exact() ? "OK: exact for every SKU" : "WRONG");
        if (!result.exact()) {
            System.exit(1);
        }
    }

    static Result run(String jdbcUrl, int messageCount, long seed) throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(4);
        try (HikariDataSource dataSource = new HikariDataSource(config)) {
            String runId = UUID.randomUUID().toString().substring(0, 8);
            PostgresDedupStore store = PostgresDedupStore.builder(dataSource).namespace("inbox-demo-" + runId)
                    .validateSchema(false).build();
            store.createSchema();
            InventoryInbox.createTables(dataSource);

            List<ReserveStock> messages = ReserveStockFeed.generate(seed, messageCount, 10);
            Random crashes = new Random(seed);
            InventoryInbox inbox = new InventoryInbox(dataSource, store, runId, () -> crashes.nextDouble() < 0.05);
            BrokerStats stats = new SimulatedBroker(messages, SimulatedBroker.Faults.DEFAULT, seed).deliverAll(inbox);

            return new Result(stats.published(), stats.deliveries(), stats.duplicatePublishes(), stats.crashesBeforeAck(),
                    inbox.rolledBack(), Inventory.expectedFrom(messages).reservedBySku(), inbox.reservedStock(),
                    inbox.reservationRows());
        }
    }

    private static String total(Map<String, Long> bySku) {
        return bySku.values().stream().mapToLong(Long::longValue).sum() + " units over " + bySku.size() + " SKUs";
    }
}
