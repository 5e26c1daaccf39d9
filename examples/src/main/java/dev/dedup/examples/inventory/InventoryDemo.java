package dev.dedup.examples.inventory;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.spi.StoreUri;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Reserves stock for a stream of orders under an at-least-once broker that duplicates and redelivers messages,
 * once with a naive consumer and once with an {@link dev.dedup.IdempotentConsumer}, and compares both with the
 * exact expected reservations.
 *
 * <p>Run with {@code mvn -Pdemo package [-Ddemo.store=redis://localhost:6379]} from the examples module, or
 * {@code java ... InventoryDemo [store-uri] [--seed=N] [--messages=N]}. Exits with 1 if the idempotent
 * consumer's reservations are not exact for every SKU.
 */
public final class InventoryDemo {

    private InventoryDemo() {}

    public static void main(String[] args) {
        DemoResult result;
        try {
            result = run(DemoConfig.fromArgs(args));
        } catch (IllegalArgumentException | DedupConfigurationException e) {
            System.err.println("inventory demo: " + e.getMessage());
            System.exit(1);
            return;
        }
        System.out.print(DemoReport.render(result));
        // Success returns normally rather than calling System.exit(0): under exec:java that would end Maven itself.
        if (result.exitCode() != 0) {
            System.exit(result.exitCode());
        }
    }

    /** Runs both consumers over the same faulty deliveries and reports what each reserved. */
    static DemoResult run(DemoConfig config) {
        long started = System.nanoTime();
        List<ReserveStock> messages = ReserveStockFeed.generate(config.seed(), config.messages(), config.skus());
        Inventory expected = Inventory.expectedFrom(messages);
        // A different seed for faults than for the stream, so changing one does not shift the other.
        SimulatedBroker broker = new SimulatedBroker(messages, config.faults(), config.seed() * 31 + 7,
                config.consumers());

        Inventory naiveInventory = new Inventory();
        BrokerStats naiveDeliveries = broker.deliverAll(new NaiveReservationConsumer(naiveInventory));

        // A fresh namespace per run, so reruns against a shared server never see an earlier run's keys.
        String namespace = "demo-" + UUID.randomUUID().toString().substring(0, 8);
        Inventory idempotentInventory = new Inventory();
        BrokerStats idempotentDeliveries;
        OutcomeCounts outcomes;
        try (DedupStore store = DedupStores.open(config.storeUri(), Map.of("namespace", namespace))) {
            IdempotentReservationConsumer consumer = new IdempotentReservationConsumer(store, idempotentInventory);
            idempotentDeliveries = broker.deliverAll(consumer);
            outcomes = consumer.outcomes();
        }

        return new DemoResult(
                StoreUri.redact(config.storeUri()),
                namespace,
                config,
                messages.size(),
                naiveDeliveries,
                idempotentDeliveries,
                new ConsumerResult("naive consumer", naiveInventory.reservedBySku(), expected.reservedBySku()),
                new ConsumerResult("idempotent consumer", idempotentInventory.reservedBySku(),
                        expected.reservedBySku()),
                outcomes,
                Duration.ofNanos(System.nanoTime() - started));
    }
}
