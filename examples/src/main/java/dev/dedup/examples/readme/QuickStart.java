package dev.dedup.examples.readme;

// readme:quick-start
import dev.dedup.*;   // DedupStore, DedupStores, IdempotentConsumer, ProcessingOutcome, ResultCodec
import java.time.Duration;

class OrderListener {
    record Order(String messageId, String sku, int quantity) {}

    // Any store URI: postgresql://..., redis://..., dynamodb://..., mongodb://... (or build one from your client).
    private final DedupStore store = DedupStores.open("memory:?namespace=orders");
    private final IdempotentConsumer<Order, String> consumer =
            IdempotentConsumer.builder(store, Order::messageId, ResultCodec.utf8())
                    .lease(Duration.ofSeconds(30))      // longer than your slowest handler; heartbeats renew it
                    .retention(Duration.ofDays(7))      // longer than your broker's redelivery window
                    .build();

    /** Called by your broker client for every delivery, redeliveries included: true means ack. */
    boolean onMessage(Order order) {
        ProcessingOutcome<String> outcome = consumer.process(order, this::reserve);
        return outcome.shouldAck();
    }

    private String reserve(Order order) {
        return "reserved " + order.quantity() + " x " + order.sku();   // your side effect, once per messageId
    }
}
// end
