package dev.dedup.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DeliverCallback;
import com.rabbitmq.client.Delivery;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DeliverCallback} for manual acks that runs each delivery through an {@link IdempotentConsumer} and settles
 * it by its outcome:
 *
 * <table>
 *   <caption>Outcome to settlement</caption>
 *   <tr><th>Outcome</th><th>Settlement</th></tr>
 *   <tr><td>{@code Processed}, {@code AlreadyProcessed}</td><td>ack</td></tr>
 *   <tr><td>{@code LeaseLost}</td><td>ack, counted and logged</td></tr>
 *   <tr><td>{@code InProgressElsewhere}</td><td>parked in the retry queue (not counted as an attempt)</td></tr>
 *   <tr><td>{@code Failed}, retryable</td><td>parked, with the attempt count in a header; dead-lettered once
 *       {@code maxAttempts} failures are reached. A failure before the handler ran (the store failed, or was
 *       closed at shutdown) does not count as an attempt; nor does a requeue lose the count.</td></tr>
 *   <tr><td>{@code Failed} with {@code keyKept}, or without a key (no {@code message-id}), {@code AlreadyFailed},
 *       {@code KeyReused} (the consumer's {@code fingerprint} differs from the stored one)</td><td>reject without
 *       requeue: dead-lettered</td></tr>
 * </table>
 *
 * <pre>{@code
 * DedupQueues queues = DedupQueues.named("orders").declare(channel);
 * channel.basicQos(50);
 * IdempotentDeliverCallback<Void> callback = IdempotentDeliverCallback.builder(channel, queues, store, delivery -> {
 *     reserve(delivery.getBody());
 *     return null;
 * }).build();
 * channel.basicConsume(queues.queue(), false, callback, tag -> {});
 * }</pre>
 *
 * <p>Parking, not requeueing, is what avoids a hot redelivery loop: a requeued message comes straight back, while a
 * parked one waits out the retry queue's TTL ({@link DedupQueues#retryDelay()}). A parked copy is published with
 * confirms before the original is acked, so a crash in between leaves two copies, which deduplication absorbs, and
 * never none. Bound to one channel, whose consumer thread calls it one delivery at a time.
 *
 * @param <R> the handler's result type
 */
public final class IdempotentDeliverCallback<R> implements DeliverCallback, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IdempotentDeliverCallback.class);

    /** The decision for one delivery: how to settle it, and the attempt count a parked copy carries. */
    private record Decision(Settlement settlement, int attempts) {}

    private final Channel channel;
    private final DedupQueues queues;
    private final IdempotentConsumer<Delivery, R> consumer;
    private final MessageHandler<? super Delivery, ? extends R> handler;
    private final int maxAttempts;
    private final Duration publishTimeout;
    private final OutcomeListener<? super R> listener;
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong parked = new AtomicLong();
    private final AtomicLong requeuedLater = new AtomicLong();
    private final AtomicLong deadLettered = new AtomicLong();
    private final AtomicLong leaseLost = new AtomicLong();
    private final RequeuedAttempts requeuedAttempts = new RequeuedAttempts();
    private final AckRun acks;
    private ConfirmedPublisher retryPublisher;

    private IdempotentDeliverCallback(Builder<R> builder) {
        this.channel = builder.channel;
        this.queues = builder.queues;
        this.consumer = builder.consumer;
        this.handler = builder.handler;
        this.maxAttempts = builder.maxAttempts;
        this.publishTimeout = builder.publishTimeout;
        this.listener = builder.listener;
        this.acks = new AckRun(channel, builder.ackRunSize, builder.ackRunDelay.toMillis(), Delays.TIMER);
    }

    /**
     * Starts a callback around a consumer you built: your key function, codec, lease, retention and
     * {@code keepKeyOn}.
     *
     * @param channel the channel the callback is registered on, where it acks
     * @param queues the topology, declared: the retry queue parks, the work queue's dead-letter exchange rejects
     * @param consumer the idempotent consumer; {@link RabbitKeys#messageId()} is the usual key function
     * @param handler the business work for one delivery
     * @param <R> the handler's result type
     * @return a builder for further settings
     */
    public static <R> Builder<R> builder(Channel channel, DedupQueues queues,
            IdempotentConsumer<Delivery, R> consumer, MessageHandler<? super Delivery, ? extends R> handler) {
        return new Builder<>(channel, queues, consumer, handler);
    }

    /**
     * Starts a callback on {@code store}, keyed by the {@code message-id} property, storing no result, with the
     * consumer's default lease (30 s) and retention (1 day). Build the consumer yourself for other settings.
     *
     * @param channel the channel the callback is registered on, where it acks
     * @param queues the topology, declared
     * @param store where keys are claimed
     * @param handler the business work for one delivery; returns null
     * @return a builder for further settings
     */
    public static Builder<Void> builder(Channel channel, DedupQueues queues, DedupStore store,
            MessageHandler<? super Delivery, Void> handler) {
        IdempotentConsumer<Delivery, Void> consumer =
                IdempotentConsumer.builder(store, RabbitKeys.messageId(), ResultCodec.none()).build();
        return new Builder<>(channel, queues, consumer, handler);
    }

    /**
     * Processes one delivery and settles it; called by the client's consumer thread.
     *
     * @param consumerTag the consumer's tag
     * @param delivery the delivery
     * @throws IOException when the settlement cannot be sent (the channel closed): the broker redelivers
     */
    @Override
    public void handle(String consumerTag, Delivery delivery) throws IOException {
        acks.arrived(delivery.getEnvelope().getDeliveryTag());
        boolean settled = false;
        try {
            settle(delivery);
            settled = true;
        } finally {
            if (!settled) {
                acks.leftUnsettled();
            }
        }
    }

    private void settle(Delivery delivery) throws IOException {
        AtomicBoolean ran = new AtomicBoolean();
        ProcessingOutcome<R> outcome = consumer.process(delivery, message -> {
            ran.set(true);
            return handler.handle(message);
        });
        Decision decision = decide(delivery, outcome, ran.get());
        notifyListener(delivery, outcome, decision.settlement());
        long tag = delivery.getEnvelope().getDeliveryTag();
        switch (decision.settlement()) {
            case ACK -> {
                acks.ack(tag);
                acked.incrementAndGet();
            }
            case DEAD_LETTER -> {
                channel.basicReject(tag, false);
                deadLettered.incrementAndGet();
            }
            case RETRY_LATER -> park(delivery, outcome.key(), decision.attempts());
        }
    }

    private Decision decide(Delivery delivery, ProcessingOutcome<R> outcome, boolean handlerRan) {
        int attempts = Math.max(Attempts.of(delivery.getProperties()), requeuedAttempts.take(outcome.key()));
        if (outcome instanceof ProcessingOutcome.Processed<R> || outcome instanceof ProcessingOutcome.AlreadyProcessed<R>) {
            return new Decision(Settlement.ACK, attempts);
        }
        if (outcome instanceof ProcessingOutcome.LeaseLost<R> lost) {
            leaseLost.incrementAndGet();
            log.warn("key {} was processed but its completion was not recorded ({}); acking: a redelivery elsewhere"
                    + " may have run it too", lost.key(),
                    lost.storeFailure().map(e -> "store failed: " + e.getClass().getSimpleName()).orElse("lease lapsed"));
            return new Decision(Settlement.ACK, attempts);
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere<R>) {
            return new Decision(Settlement.RETRY_LATER, attempts);
        }
        if (outcome instanceof ProcessingOutcome.AlreadyFailed<R> failed) {
            log.info("key {} failed for good before; dead-lettering the redelivery", failed.key());
            return new Decision(Settlement.DEAD_LETTER, attempts);
        }
        if (outcome instanceof ProcessingOutcome.KeyReused<R> reused) {
            log.warn("key {} is held by a message with another payload fingerprint; dead-lettering this one",
                    reused.key());
            return new Decision(Settlement.DEAD_LETTER, attempts);
        }
        ProcessingOutcome.Failed<R> failed = (ProcessingOutcome.Failed<R>) outcome;
        return decideFailed(failed, attempts, handlerRan);
    }

    private Decision decideFailed(ProcessingOutcome.Failed<R> failed, int attempts, boolean handlerRan) {
        if (failed.key() == null || failed.keyKept()) {
            log.warn("dead-lettering {}: {}", failed.key() == null ? "a delivery without a usable key"
                    : "key " + failed.key() + " (failure kept)", failed.cause().getClass().getSimpleName());
            return new Decision(Settlement.DEAD_LETTER, attempts);
        }
        if (!handlerRan) {
            // The store failed or was closed (at shutdown) before the handler ran: not an attempt of the message's.
            // An outage is the store's to report; anything else would repeat unseen.
            if (!(failed.cause() instanceof DedupStoreException store && store.isRetryable())) {
                log.warn("parking key {} without running the handler: {}", failed.key(), failed.cause().toString());
            }
            return new Decision(Settlement.RETRY_LATER, attempts);
        }
        int made = attempts + 1;
        if (made >= maxAttempts) {
            log.warn("dead-lettering key {} after {} failed attempts (last: {})", failed.key(), made,
                    failed.cause().getClass().getSimpleName());
            return new Decision(Settlement.DEAD_LETTER, made);
        }
        return new Decision(Settlement.RETRY_LATER, made);
    }

    private void notifyListener(Delivery delivery, ProcessingOutcome<R> outcome, Settlement settlement) {
        try {
            listener.onOutcome(delivery, outcome, settlement);
        } catch (RuntimeException e) {
            log.warn("outcome listener failed; settling the delivery all the same", e);
        }
    }

    /** Parks a copy in the retry queue, then acks; if the copy cannot be published, nacks with requeue later. */
    private void park(Delivery delivery, String key, int attempts) throws IOException {
        long tag = delivery.getEnvelope().getDeliveryTag();
        try {
            retryPublisher().publish("", queues.retryQueue(), Attempts.with(delivery.getProperties(), attempts),
                    delivery.getBody());
        } catch (PublishException | IOException e) {
            log.warn("could not park a delivery in {} ({}); requeueing it after {} instead", queues.retryQueue(),
                    e.getMessage(), queues.retryDelay());
            if (attempts > 0) {
                requeuedAttempts.remember(key, attempts);     // the requeued original keeps its old header
            }
            requeueLater(tag);
            return;
        }
        acks.ack(tag);
        parked.incrementAndGet();
    }

    /**
     * A delayed nack: never an immediate requeue, which would loop as fast as the broker can redeliver. Until it is
     * sent, no run of acks may pass the delivery: a multiple ack would settle it as done.
     */
    private void requeueLater(long tag) throws IOException {
        requeuedLater.incrementAndGet();
        acks.holdBack();
        Delays.TIMER.schedule(() -> {
            try {
                channel.basicNack(tag, false, true);
            } catch (IOException | RuntimeException e) {
                // The channel closed meanwhile: the broker requeues every unacked delivery by itself.
                log.debug("delayed nack of delivery {} not sent", tag, e);
            } finally {
                acks.settledHeldBack();
            }
        }, queues.retryDelay().toMillis(), TimeUnit.MILLISECONDS);
    }

    private ConfirmedPublisher retryPublisher() throws IOException {
        if (retryPublisher == null || !retryPublisher.isOpen()) {
            retryPublisher = ConfirmedPublisher.open(channel.getConnection(), publishTimeout);
        }
        return retryPublisher;
    }

    /**
     * How many deliveries this callback settled each way.
     *
     * @return a snapshot of the counts
     */
    public DeliveryCounts counts() {
        return new DeliveryCounts(acked.get(), parked.get(), requeuedLater.get(), deadLettered.get(),
                leaseLost.get());
    }

    /**
     * Sends the acks still waiting in a run, then closes the channel that parks copies in the retry queue (not the
     * consuming channel).
     */
    @Override
    public void close() {
        try {
            acks.send();
        } catch (IOException | RuntimeException e) {
            log.debug("the last run of acks was not sent; the broker redelivers those messages", e);
        }
        if (retryPublisher != null) {
            retryPublisher.close();
        }
    }

    /** The timer of delayed nacks: one daemon thread, created on first use. */
    private static final class Delays {
        static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "dedup-rabbitmq-delayed-nack");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Settings for an {@link IdempotentDeliverCallback}.
     *
     * @param <R> the handler's result type
     */
    public static final class Builder<R> {
        private final Channel channel;
        private final DedupQueues queues;
        private final IdempotentConsumer<Delivery, R> consumer;
        private final MessageHandler<? super Delivery, ? extends R> handler;
        private int maxAttempts = 5;
        private Duration publishTimeout = Duration.ofSeconds(10);
        private OutcomeListener<? super R> listener = (delivery, outcome, settlement) -> { };
        private int ackRunSize = 1;
        private Duration ackRunDelay = Duration.ZERO;

        private Builder(Channel channel, DedupQueues queues, IdempotentConsumer<Delivery, R> consumer,
                MessageHandler<? super Delivery, ? extends R> handler) {
            this.channel = Objects.requireNonNull(channel, "channel");
            this.queues = Objects.requireNonNull(queues, "queues");
            this.consumer = Objects.requireNonNull(consumer, "consumer");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * How many times a retryable failure may run the handler before the message is dead-lettered (default 5).
         *
         * @param maxAttempts from 1 (dead-letter on the first failure) to 1000
         * @return this builder
         */
        public Builder<R> maxAttempts(int maxAttempts) {
            if (maxAttempts < 1 || maxAttempts > 1000) {
                throw new IllegalArgumentException("maxAttempts must be from 1 to 1000, but was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * How long parking a copy waits for the broker's confirm before requeueing later instead (default 10 s).
         *
         * @param timeout from 1 ms to 10 minutes
         * @return this builder
         */
        public Builder<R> publishTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("publishTimeout must be from 1 ms to 10 minutes, but was "
                        + timeout);
            }
            this.publishTimeout = timeout;
            return this;
        }

        /**
         * Acks in runs (default: each delivery alone): the acks of up to {@code maxSize} deliveries go out as one
         * {@code basic.ack} with {@code multiple}, once the run is full or {@code maxDelay} after its first ack,
         * whichever comes first. Each delivery is still acked only after its outcome is stored; a crash before a run
         * goes out redelivers its messages, which deduplication acks without running them again. Keep
         * {@code maxSize} at or below the channel's prefetch ({@code basicQos}): the broker sends no more than the
         * prefetch while acks wait, so a larger run only ever goes out by its delay. A run only forms while this
         * callback is the channel's one consumer and holds no delivery back for a delayed requeue; otherwise acks
         * go out alone.
         *
         * @param maxSize from 1 (each ack alone) to 10,000
         * @param maxDelay from 1 ms to 10 s
         * @return this builder
         */
        public Builder<R> ackInRuns(int maxSize, Duration maxDelay) {
            Objects.requireNonNull(maxDelay, "maxDelay");
            if (maxSize < 1 || maxSize > 10_000) {
                throw new IllegalArgumentException("ackInRuns maxSize must be from 1 to 10000, but was " + maxSize);
            }
            if (maxDelay.toMillis() < 1 || maxDelay.compareTo(Duration.ofSeconds(10)) > 0) {
                throw new IllegalArgumentException("ackInRuns maxDelay must be from 1 ms to 10 s, but was "
                        + maxDelay);
            }
            this.ackRunSize = maxSize;
            this.ackRunDelay = maxDelay;
            return this;
        }

        /**
         * Told of every outcome before its settlement is sent.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder<R> listener(OutcomeListener<? super R> listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Builds the callback.
         *
         * @return the callback, to pass to {@code basicConsume} with {@code autoAck = false}
         */
        public IdempotentDeliverCallback<R> build() {
            return new IdempotentDeliverCallback<>(this);
        }
    }
}
