package dev.dedup.examples.inventory;

/**
 * What one run of the {@link SimulatedBroker} did. {@code deliveries == published + redeliveries};
 * {@code undelivered} is non-zero only if the broker gave up. {@code sequenceDigest} fingerprints the order of
 * delivered message ids, so two runs can be shown to have seen the same deliveries.
 */
record BrokerStats(
        int published,
        int duplicatePublishes,
        int deliveries,
        int crashesBeforeAck,
        int nacks,
        int redeliveries,
        int undelivered,
        long sequenceDigest) {}
