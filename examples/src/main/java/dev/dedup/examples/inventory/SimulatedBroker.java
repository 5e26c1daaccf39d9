package dev.dedup.examples.inventory;

import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * An in-process at-least-once broker over a fixed stream of messages. A delivery leaves the queue only when the
 * subscriber acks it and the ack arrives; otherwise it comes back a few deliveries later, like a message whose
 * visibility timeout ran out.
 *
 * <p>Faults come from a {@link Random} seeded per run: producer retries publish some messages twice with the same
 * id, and the consumer sometimes "crashes" after processing but before its ack reaches the broker. The random draws
 * do not depend on what the subscriber answers, so two subscribers that ack alike see the same deliveries.
 */
final class SimulatedBroker {

    /** Answers one delivery: true acks it, false nacks it (the broker redelivers it later). */
    @FunctionalInterface
    interface Subscriber {
        boolean deliver(ReserveStock message);
    }

    /** Fault probabilities per message or delivery, and how many deliveries later a redelivery comes back. */
    record Faults(double duplicatePublish, double crashBeforeAck, int maxRedeliveryDelay) {
        static final Faults DEFAULT = new Faults(0.03, 0.04, 50);
    }

    /** Guards against a subscriber that never acks (for example, a store that is down). */
    private static final int MAX_DELIVERIES_PER_PUBLISH = 20;

    /** A copy of a message in the queue, visible from delivery number {@code dueAt} on. */
    private record Pending(ReserveStock message, long dueAt, long sequence, int attempts) {}

    private final List<ReserveStock> messages;
    private final Faults faults;
    private final long seed;

    SimulatedBroker(List<ReserveStock> messages, Faults faults, long seed) {
        this.messages = List.copyOf(messages);
        this.faults = faults;
        this.seed = seed;
    }

    /** Publishes the stream, then delivers until every copy is acked; each call replays the same faults. */
    BrokerStats deliverAll(Subscriber subscriber) {
        Random random = new Random(seed);
        PriorityQueue<Pending> queue = new PriorityQueue<>(
                Comparator.comparingLong(Pending::dueAt).thenComparingLong(Pending::sequence));
        long sequence = 0;
        int duplicatePublishes = 0;
        for (int i = 0; i < messages.size(); i++) {
            ReserveStock message = messages.get(i);
            queue.add(new Pending(message, i, sequence++, 0));
            if (random.nextDouble() < faults.duplicatePublish()) {
                // The producer timed out waiting for the broker's confirm and sent the message again.
                duplicatePublishes++;
                queue.add(new Pending(message, i + 1 + random.nextInt(faults.maxRedeliveryDelay()), sequence++, 0));
            }
        }
        int published = queue.size();
        int maxDeliveries = published * MAX_DELIVERIES_PER_PUBLISH;

        int deliveries = 0;
        int crashes = 0;
        int nacks = 0;
        int redeliveries = 0;
        long digest = 17;
        while (!queue.isEmpty() && deliveries < maxDeliveries) {
            Pending pending = queue.poll();
            deliveries++;
            if (pending.attempts() > 0) {
                redeliveries++;
            }
            digest = digest * 31 + pending.message().messageId().hashCode();

            boolean acked = subscriber.deliver(pending.message());
            // Drawn on every delivery, whatever the subscriber answered, to keep runs comparable.
            boolean crashed = random.nextDouble() < faults.crashBeforeAck();
            int delay = 1 + random.nextInt(faults.maxRedeliveryDelay());

            if (!acked) {
                nacks++;
            } else if (crashed) {
                crashes++;
            } else {
                continue;
            }
            long dueAt = Math.max(pending.dueAt(), deliveries) + delay;
            queue.add(new Pending(pending.message(), dueAt, sequence++, pending.attempts() + 1));
        }
        return new BrokerStats(published, duplicatePublishes, deliveries, crashes, nacks, redeliveries, queue.size(),
                digest);
    }
}
