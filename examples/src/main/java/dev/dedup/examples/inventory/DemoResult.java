package dev.dedup.examples.inventory;

import java.time.Duration;

/**
 * Everything one demo run found. {@code naiveDeliveries} and {@code idempotentDeliveries} are the broker's two runs
 * over the same seed; they are equal when both consumers saw the same delivery sequence.
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

    boolean sameDeliveries() {
        return naiveDeliveries.equals(idempotentDeliveries);
    }

    /** 0 when the idempotent consumer reserved exactly the expected quantity of every SKU, else 1. */
    int exitCode() {
        return idempotent.exact() ? 0 : 1;
    }
}
