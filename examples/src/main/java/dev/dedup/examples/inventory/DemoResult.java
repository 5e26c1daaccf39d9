package dev.dedup.examples.inventory;

import java.time.Duration;

/**
 * Everything one demo run found. {@code naiveDeliveries} and {@code idempotentDeliveries} are the broker's two runs
 * over the same seed and faults; they differ only where the idempotent consumer nacked a delivery that was in
 * progress elsewhere, which the naive one never does.
 */
record DemoResult(
        String redactedStoreUri,
        String namespace,
        DemoConfig config,
        int uniqueMessages,
        BrokerStats naiveDeliveries,
        BrokerStats idempotentDeliveries,
        ConsumerResult naive,
        ConsumerResult idempotent,
        OutcomeCounts outcomes,
        Duration elapsed) {

    /** 0 when the idempotent consumer reserved exactly the expected quantity of every SKU, else 1. */
    int exitCode() {
        return idempotent.exact() ? 0 : 1;
    }
}
