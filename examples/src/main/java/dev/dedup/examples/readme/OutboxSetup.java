package dev.dedup.examples.readme;

import dev.dedup.outbox.Outbox;
import dev.dedup.outbox.OutboxRelay;
import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerConfig;

/** docs/outbox.md's service and relay, compiled. */
final class OutboxSetup {
    record Order(String id, String sku, int quantity) {}

    private Outbox outbox;

    void setUp(DataSource dataSource) {
        // readme:outbox-create
        Outbox outbox = Outbox.builder(dataSource)
                .table("outbox")                    // default; or "schema.table"
                .retention(Duration.ofDays(1))      // how long published events stay; pg_cron purges them after
                .build();
        outbox.createSchema();                      // once, at deployment: table, indexes, purge job; idempotent
        // end
        this.outbox = outbox;
    }

    String placeOrder(DataSource dataSource, Order order) throws SQLException {
        // readme:outbox-append
        try (Connection tx = dataSource.getConnection()) {
            tx.setAutoCommit(false);                                    // required: append refuses auto-commit
            try (PreparedStatement reserve = tx.prepareStatement(
                    "UPDATE stock SET reserved = reserved + ? WHERE sku = ?")) {
                reserve.setInt(1, order.quantity());
                reserve.setString(2, order.sku());
                reserve.executeUpdate();                                // the business change
            }
            String messageId = outbox.append(tx, "orders", order.sku(), // topic or exchange; key orders per SKU
                    order.id().getBytes(StandardCharsets.UTF_8), Map.of("type", "StockReserved"));
            tx.commit();                                                // the change and its event, or neither
            return messageId;                                           // travels as the message-id header
        }
        // end
    }

    OutboxRelay relay() {
        // readme:outbox-relay
        KafkaOutboxPublisher kafka = KafkaOutboxPublisher.create(    // idempotent producer, acks=all
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "kafka:9092"), Duration.ofSeconds(30));
        OutboxRelay relay = OutboxRelay.builder(outbox, kafka)
                .batchSize(100)
                .pollInterval(Duration.ofMillis(100))                   // an event's latency bound when idle
                .build();
        relay.start();                                                  // its own thread; relay.close() stops it
        // end
        return relay;
    }
}
