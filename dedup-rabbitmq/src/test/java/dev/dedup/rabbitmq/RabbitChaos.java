package dev.dedup.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Consumer;
import com.rabbitmq.client.DeliverCallback;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.impl.ForgivingExceptionHandler;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One chaos run in this JVM: N reserve messages (a share published twice) consumed by 3 consumers, each on its own
 * connection, while a driver kills a random consumer's connection (no ack) every 0.5 to 1 s and reopens it, and the
 * consumers halt themselves at chosen points, recording where. Optionally the store's server is stopped for a while
 * mid-run ({@link StoreOutage}). Afterwards the effect log says what was lost or doubled.
 */
final class RabbitChaos {
    /** How the consumers process a delivery. */
    enum Kind {
        /** {@link IdempotentDeliverCallback} over a store: the effect commits on its own, before the completion. */
        CALLBACK,
        /**
         * The transactional inbox by hand (claim, effect, completion, commit, then ack), as {@code docs/postgresql.md}
         * shows it: the callback has no transactional mode, so the inbox consumer writes its own settlement.
         */
        INBOX,
        /** The control: effect, then ack, no dedup. */
        NAIVE
    }

    /** Where a consumer halts itself. */
    enum Point {
        /** Before the effect: nothing happened, the redelivery must do it. */
        BEFORE_EFFECT,
        /** The effect committed, the completion was not recorded: the documented limit, a redelivery runs again. */
        EFFECT_TO_COMPLETION,
        /** The completion was recorded, the ack never sent: the redelivery is a duplicate. */
        COMPLETION_TO_ACK,
        /** The naive consumer: the effect committed, the ack never sent. */
        EFFECT_TO_ACK
    }

    /** The figures of one run. */
    record Figures(String consumer, int messages, int publishes, long deliveries, long kills, Map<Point, Long> halts,
            long lost, long doubled, long deadLettered, long parked, long storeFailures, long leaseLost,
            long failedEffects, Duration outage, Duration recovery, Duration time) {
        long crashes(Point point) {
            return halts.getOrDefault(point, 0L);
        }

        @Override
        public String toString() {
            String figures = String.format("%s: messages=%d publishes=%d deliveries=%d kills=%d halts=%s lost=%d"
                    + " doubled=%d dead-lettered=%d parked=%d store-failures=%d lease-lost=%d failed-effects=%d"
                    + " time=%.1fs", consumer, messages, publishes, deliveries, kills, halts, lost, doubled,
                    deadLettered, parked, storeFailures, leaseLost, failedEffects, time.toMillis() / 1000.0);
            return outage == null ? figures : figures + String.format(" outage=%.1fs first-processed-after-return=%dms",
                    outage.toMillis() / 1000.0, recovery == null ? -1 : recovery.toMillis());
        }
    }

    private static final int CONSUMERS = 3;
    private static final double HALT_PROBABILITY = 0.004;
    /** The handler's own work before the effect: long enough that the driver's kills land mid-run. */
    private static final long WORK_MILLIS = 8;
    private static final Duration LEASE = Duration.ofSeconds(5);
    private static final Duration RETENTION = Duration.ofMinutes(10);

    private final String name;
    private final Kind kind;
    private final int messages;
    private final Random random;
    private final RabbitFixture rabbit;
    private final Reservations reservations;
    private final ConnectionFactory factory;
    private final IdempotentConsumer<Delivery, Void> consumer;
    private final AtomicLong deliveries = new AtomicLong();
    private final AtomicLong kills = new AtomicLong();
    private final AtomicLong parked = new AtomicLong();
    private final AtomicLong storeFailures = new AtomicLong();
    private final AtomicLong leaseLost = new AtomicLong();
    private final AtomicLong failedEffects = new AtomicLong();
    private StoreOutage outage;
    private final Map<Point, AtomicLong> halts = new EnumMap<>(Point.class);
    private volatile boolean chaos = true;

    /**
     * A run of {@code kind}; {@code store} is where {@link Kind#CALLBACK} claims (unused by the others: the inbox
     * claims in the reservations' own PostgreSQL store, inside the effect's transaction).
     */
    RabbitChaos(String name, Kind kind, DedupStore store, int messages, long seed, RabbitFixture rabbit,
            Reservations reservations) {
        this.name = name;
        this.kind = kind;
        this.messages = messages;
        this.random = new Random(seed);
        this.rabbit = rabbit;
        this.reservations = reservations;
        this.factory = RabbitTestBroker.factory();
        factory.setExceptionHandler(new QuietAboutCrashes());
        // Retention outlasts the run, and no more: keys left in a shared Redis expire soon after.
        this.consumer = store == null ? null : IdempotentConsumer.builder(store, RabbitKeys.messageId(),
                ResultCodec.none()).lease(LEASE).retention(RETENTION).build();
        for (Point point : Point.values()) {
            halts.put(point, new AtomicLong());
        }
    }

    /** Stops the store's server mid-run, as {@code outage} says. */
    RabbitChaos with(StoreOutage outage) {
        this.outage = outage;
        return this;
    }

    Figures run(Duration limit) throws Exception {
        long started = System.nanoTime();
        List<Slot> slots = new ArrayList<>();
        for (int i = 0; i < CONSUMERS; i++) {
            Slot slot = new Slot("consumer-" + i);
            slot.open();
            slots.add(slot);
        }
        List<String> publishes = plan();
        Thread publisher = new Thread(() -> publish(publishes), "chaos-publisher");
        publisher.start();
        long deadline = System.nanoTime() + limit.toNanos();
        long nextKill = System.nanoTime() + killInterval();
        if (outage != null) {
            outage.start(this::progress);
        }
        try {
            // Chaos until every message has taken effect at least once and all were published.
            while (publisher.isAlive() || progress() < messages || (outage != null && !outage.over())) {
                checkDeadline(deadline);
                Thread.sleep(100);
                reopenDead(slots);
                if (System.nanoTime() >= nextKill) {
                    Slot victim = slots.get(random.nextInt(slots.size()));
                    victim.crash();
                    kills.incrementAndGet();
                    victim.open();
                    nextKill = System.nanoTime() + killInterval();
                }
            }
            chaos = false;
            reopenDead(slots);
            drain(deadline);
        } finally {
            chaos = false;
            publisher.join(10_000);
            for (Slot slot : slots) {
                slot.crash();
            }
            if (outage != null) {
                outage.finish();   // the server is back even if the run failed, for the tests that follow
            }
        }
        Map<Point, Long> halted = new EnumMap<>(Point.class);
        halts.forEach((point, count) -> {
            if (count.get() > 0) {
                halted.put(point, count.get());
            }
        });
        return new Figures(name, messages, publishes.size(), deliveries.get(), kills.get(), halted,
                messages - reservations.distinctMessages(), reservations.doubled(),
                rabbit.ready(rabbit.queues.deadLetterQueue()), parked.get(), storeFailures.get(), leaseLost.get(),
                failedEffects.get(), outage == null ? null : outage.length(),
                outage == null ? null : outage.recovery(), Duration.ofNanos(System.nanoTime() - started));
    }

    /** Messages that took effect so far; -1 while PostgreSQL is down, which the driver rides out. */
    private long progress() {
        try {
            return reservations.distinctMessages();
        } catch (SQLException down) {
            return -1;
        }
    }

    private long killInterval() {
        return Duration.ofMillis(500 + random.nextInt(501)).toNanos();
    }

    /** Unique ids; 10% of them published a second time, all in random order. */
    private List<String> plan() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            ids.add("reserve-" + i);
        }
        for (int i = 0; i < messages / 10; i++) {
            ids.add("reserve-" + random.nextInt(messages));
        }
        Collections.shuffle(ids, random);
        return ids;
    }

    private void publish(List<String> ids) {
        try (Connection connection = RabbitTestBroker.connect("chaos-publisher");
                ConfirmedPublisher publisher = ConfirmedPublisher.open(connection, Duration.ofSeconds(30))) {
            for (String id : ids) {
                int number = Integer.parseInt(id.substring("reserve-".length()));
                String body = (number % Reservations.SKUS) + "," + (1 + number % 5);
                publisher.publish("", rabbit.queues.queue(), new AMQP.BasicProperties.Builder().messageId(id)
                        .deliveryMode(2).build(), body.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException | TimeoutException e) {
            throw new IllegalStateException("chaos publisher failed", e);
        }
    }

    private void reopenDead(List<Slot> slots) throws IOException, TimeoutException {
        for (Slot slot : slots) {
            if (slot.dead()) {
                slot.open();
            }
        }
    }

    /** Waits until nothing is queued, parked or being delivered for 1.5 s. */
    private void drain(long deadline) throws Exception {
        long lastDeliveries = -1;
        int quiet = 0;
        while (quiet < 3) {
            checkDeadline(deadline);
            Thread.sleep(500);
            long now = deliveries.get();
            boolean empty = rabbit.ready(rabbit.queues.queue()) == 0 && rabbit.ready(rabbit.queues.retryQueue()) == 0;
            quiet = empty && now == lastDeliveries ? quiet + 1 : 0;
            lastDeliveries = now;
        }
    }

    private void checkDeadline(long deadline) {
        if (System.nanoTime() > deadline) {
            throw new AssertionError("chaos run did not finish in time: deliveries=" + deliveries + " kills=" + kills
                    + " halts=" + halts);
        }
    }

    private boolean halts(Point point) {
        if (chaos && ThreadLocalRandom.current().nextDouble() < HALT_PROBABILITY) {
            halts.get(point).incrementAndGet();
            return true;
        }
        return false;
    }

    private static int[] order(Delivery delivery) {
        String[] parts = new String(delivery.getBody(), StandardCharsets.UTF_8).split(",");
        return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
    }

    /** One consumer: a connection of its own, replaced after every crash. */
    private final class Slot {
        private final String name;
        private volatile Connection connection;

        Slot(String name) {
            this.name = name;
        }

        synchronized void open() throws IOException, TimeoutException {
            Connection opened = factory.newConnection(name);
            Channel channel = opened.createChannel();
            channel.basicQos(20);
            DeliverCallback callback = switch (kind) {
                case CALLBACK -> idempotent(opened, channel);
                case INBOX -> new InboxCallback(name, opened, channel);
                case NAIVE -> naive(opened, channel);
            };
            channel.basicConsume(rabbit.queues.queue(), false, (tag, delivery) -> {
                deliveries.incrementAndGet();
                callback.handle(tag, delivery);
            }, tag -> { });
            connection = opened;
        }

        boolean dead() {
            return !connection.isOpen();
        }

        void crash() {
            connection.abort(5_000);
        }

        private DeliverCallback idempotent(Connection own, Channel channel) {
            return IdempotentDeliverCallback.builder(channel, rabbit.queues, consumer, delivery -> {
                if (halts(Point.BEFORE_EFFECT)) {
                    own.abort(5_000);
                    throw new Halt();
                }
                Thread.sleep(WORK_MILLIS);
                int[] order = order(delivery);
                try {
                    reservations.reserve(delivery.getProperties().getMessageId(), name, order[0], order[1]);
                } catch (SQLException e) {
                    // Counted: when the server stops during the commit, the commit may have happened and only its
                    // reply was lost, and the redelivery then applies the effect again.
                    failedEffects.incrementAndGet();
                    throw e;
                }
                if (halts(Point.EFFECT_TO_COMPLETION)) {
                    own.abort(5_000);
                    throw new Halt();
                }
                return null;
            }).listener((delivery, outcome, settlement) -> {
                if (settlement == Settlement.RETRY_LATER) {
                    parked.incrementAndGet();
                }
                count(outcome);
                if (outcome instanceof ProcessingOutcome.Processed<?> && halts(Point.COMPLETION_TO_ACK)) {
                    own.abort(5_000);   // the ack that follows fails: the connection is gone
                }
            }).build();
        }

        private DeliverCallback naive(Connection own, Channel channel) {
            return (tag, delivery) -> {
                if (halts(Point.BEFORE_EFFECT)) {
                    own.abort(5_000);
                    return;
                }
                int[] order = order(delivery);
                try {
                    Thread.sleep(WORK_MILLIS);
                    reservations.reserve(delivery.getProperties().getMessageId(), name, order[0], order[1]);
                } catch (java.sql.SQLException e) {
                    throw new IOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (halts(Point.EFFECT_TO_ACK)) {
                    own.abort(5_000);
                    return;
                }
                channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
            };
        }
    }

    private void count(ProcessingOutcome<?> outcome) {
        if (outcome instanceof ProcessingOutcome.Processed<?> && outage != null) {
            outage.processed();
        } else if (outcome instanceof ProcessingOutcome.LeaseLost<?>) {
            leaseLost.incrementAndGet();
        } else if (outcome instanceof ProcessingOutcome.Failed<?> failed
                && failed.cause() instanceof DedupStoreException) {
            storeFailures.incrementAndGet();
        }
    }

    /**
     * The transactional inbox: the claim, the effect and the completion are one PostgreSQL transaction, acked only
     * after its commit. A halt before the commit is a crash the database answers with a rollback, so the
     * redelivery starts clean: nothing can double.
     */
    private final class InboxCallback implements DeliverCallback {
        private final String consumerName;
        private final Connection own;
        private final Channel channel;

        InboxCallback(String consumerName, Connection own, Channel channel) {
            this.consumerName = consumerName;
            this.own = own;
            this.channel = channel;
        }

        @Override
        public void handle(String consumerTag, Delivery delivery) throws IOException {
            long tag = delivery.getEnvelope().getDeliveryTag();
            boolean committed;
            try {
                committed = commitOnce(delivery);
            } catch (SQLException | DedupStoreException e) {
                // Nothing committed; requeued at once, which is a hot loop only while PostgreSQL is down, and the
                // outage runs use the callback, not this consumer.
                storeFailures.incrementAndGet();
                channel.basicNack(tag, false, true);
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (!committed) {
                return;   // halted: the connection is gone, the broker redelivers
            }
            if (halts(Point.COMPLETION_TO_ACK)) {
                own.abort(5_000);
                return;
            }
            channel.basicAck(tag, false);
        }

        /** True once the transaction committed or found the key done; false after a halt (rolled back). */
        private boolean commitOnce(Delivery delivery) throws SQLException, InterruptedException {
            String id = delivery.getProperties().getMessageId();
            try (java.sql.Connection transaction = reservations.pool.getConnection()) {
                transaction.setAutoCommit(false);
                try {
                    DedupStore inbox = reservations.store().inTransaction(transaction);
                    // Only committed records are visible, and they are all completed: a duplicate is done work.
                    // A concurrent delivery of the key waits here on the uncommitted row until its commit.
                    if (!(inbox.claim(id, LEASE) instanceof Claim claim)) {
                        return true;
                    }
                    if (halts(Point.BEFORE_EFFECT)) {
                        own.abort(5_000);
                        return false;
                    }
                    Thread.sleep(WORK_MILLIS);
                    int[] order = order(delivery);
                    reservations.reserveIn(transaction, id, consumerName, order[0], order[1]);
                    if (halts(Point.EFFECT_TO_COMPLETION)) {
                        own.abort(5_000);
                        return false;
                    }
                    if (!inbox.complete(claim, RETENTION, null)) {
                        throw new SQLException("the claim on " + id + " is not this transaction's");
                    }
                    transaction.commit();
                    return true;
                } finally {
                    // After a commit this is a no-op; otherwise it is what the database does when a process dies.
                    transaction.rollback();
                }
            }
        }
    }

    /** Halts and acks on a dead connection are the point of the run: do not log them as errors. */
    private static final class QuietAboutCrashes extends ForgivingExceptionHandler {
        @Override
        public void handleConsumerException(Channel channel, Throwable exception, Consumer consumer,
                String consumerTag, String methodName) {
            if (!(exception instanceof Halt) && !(exception instanceof ShutdownSignalException)) {
                super.handleConsumerException(channel, exception, consumer, consumerTag, methodName);
            }
        }
    }
}
