package dev.dedup.examples.readme;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ResultCodec;
import dev.dedup.micrometer.MeteredDedupStore;
import dev.dedup.micrometer.OutcomeMetrics;
import io.micrometer.core.instrument.MeterRegistry;

/** docs/micrometer.md's set-up, compiled. */
final class MetricsSetup {
    record Order(String messageId) {}

    private MetricsSetup() {}

    static IdempotentConsumer<Order, String> meteredConsumer(String uri, MeterRegistry meterRegistry) {
        // readme:micrometer
        DedupStore store = MeteredDedupStore.wrap(DedupStores.open(uri), meterRegistry);
        var consumer = IdempotentConsumer.builder(store, (Order o) -> o.messageId(), ResultCodec.utf8())
                .onOutcome(OutcomeMetrics.counting(meterRegistry, "orders"))
                .build();
        // end
        return consumer;
    }
}
