package dev.dedup.examples.inventory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * An in-process at-least-once broker over a fixed stream of messages. A delivery leaves the queue only when the
 * subscriber acks it and the ack arrives; otherwise it comes back a few deliveries later, like a message whose
 * visibility timeout ran out.
 *
 * <p>Faults come from a {@link Random} seeded per run: producer retries publish some messages twice with the same
 * id, right behind the original, and the consumer sometimes "crashes" after processing but before its ack reaches
 * the broker. With several consumers, the broker hands each round of deliveries to that many consumer threads at
 * once, so a message and its duplicate can be processed at the same moment. The random draws do not depend on what
 * the subscriber answers, so two subscribers that ack alike see the same deliveries.
 */
final class SimulatedBroker {

    /** Why a message is being delivered. */
    enum Kind {
        /** The first delivery of a published copy. */
        FIRST,
        /** The first delivery of a second copy the producer published after a lost confirm. */
        DUPLICATE_PUBLISH,
        /** A copy delivered again because it was nacked, or its consumer crashed before the ack. */
        REDELIVERY
    }

    /** Answers one delivery: true acks it, false nacks it (the broker redelivers it later). Called concurrently. */
    @FunctionalInterface
    interface Subscriber {
        boolean deliver(ReserveStock message, Kind kind);
    }

    /** Fault probabilities per message or delivery, and how many deliveries later a redelivery comes back. */
    record Faults(double duplicatePublish, double crashBeforeAck, int maxRedeliveryDelay) {
        static final Faults DEFAULT = new Faults(0.03, 0.04, 50);
    }

    /** Guards against a subscriber that never acks (for example, a store that is down). */
    private static final int MAX_DELIVERIES_PER_PUBLISH = 20;

    /** A copy of a message in the queue, visible from delivery number {@code dueAt} on. */
    private record Pending(ReserveStock message, long dueAt, long sequence, int attempts, Kind published) {
        Kind kind() {
            return attempts > 0 ? Kind.REDELIVERY : published;
        }
    }

    private final List<ReserveStock> messages;
    private final Faults faults;
    private final long seed;
    private final int consumers;

    /** A broker with one consumer thread. */
    SimulatedBroker(List<ReserveStock> messages, Faults faults, long seed) {
        this(messages, faults, seed, 1);
    }

    SimulatedBroker(List<ReserveStock> messages, Faults faults, long seed, int consumers) {
        if (consumers < 1) {
            throw new IllegalArgumentException("consumers must be at least 1, but was " + consumers);
        }
        this.messages = List.copyOf(messages);
        this.faults = faults;
        this.seed = seed;
        this.consumers = consumers;
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
            queue.add(new Pending(message, i, sequence++, 0, Kind.FIRST));
            if (random.nextDouble() < faults.duplicatePublish()) {
                // The producer timed out waiting for the broker's confirm and sent the message again at once.
                duplicatePublishes++;
                queue.add(new Pending(message, i + random.nextInt(3), sequence++, 0, Kind.DUPLICATE_PUBLISH));
            }
        }
        int published = queue.size();
        int maxDeliveries = published * MAX_DELIVERIES_PER_PUBLISH;

        int deliveries = 0;
        int crashes = 0;
        int nacks = 0;
        int redeliveries = 0;
        long digest = 17;
        ExecutorService threads = Executors.newFixedThreadPool(consumers);
        try {
            while (!queue.isEmpty() && deliveries < maxDeliveries) {
                List<Pending> round = new ArrayList<>(consumers);
                while (round.size() < consumers && !queue.isEmpty()) {
                    round.add(queue.poll());
                }
                List<Boolean> acks = deliverRound(threads, subscriber, round);
                for (int i = 0; i < round.size(); i++) {
                    Pending pending = round.get(i);
                    deliveries++;
                    if (pending.attempts() > 0) {
                        redeliveries++;
                    }
                    digest = digest * 31 + pending.message().messageId().hashCode();
                    // Drawn on every delivery, whatever the subscriber answered, to keep runs comparable.
                    boolean crashed = random.nextDouble() < faults.crashBeforeAck();
                    int delay = 1 + random.nextInt(faults.maxRedeliveryDelay());
                    if (!acks.get(i)) {
                        nacks++;
                    } else if (crashed) {
                        crashes++;
                    } else {
                        continue;
                    }
                    long dueAt = Math.max(pending.dueAt(), deliveries) + delay;
                    queue.add(new Pending(pending.message(), dueAt, sequence++, pending.attempts() + 1,
                            pending.published()));
                }
            }
        } finally {
            threads.shutdownNow();
        }
        return new BrokerStats(published, duplicatePublishes, deliveries, crashes, nacks, redeliveries, queue.size(),
                digest);
    }

    /** Hands each delivery of the round to its own consumer thread, all at once, and collects the answers. */
    private static List<Boolean> deliverRound(ExecutorService threads, Subscriber subscriber, List<Pending> round) {
        List<Callable<Boolean>> calls = new ArrayList<>(round.size());
        for (Pending pending : round) {
            calls.add(() -> subscriber.deliver(pending.message(), pending.kind()));
        }
        List<Boolean> acks = new ArrayList<>(round.size());
        try {
            for (Future<Boolean> answer : threads.invokeAll(calls)) {
                acks.add(answer.get());
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a consumer threw instead of answering", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while delivering", e);
        }
        return acks;
    }
}
