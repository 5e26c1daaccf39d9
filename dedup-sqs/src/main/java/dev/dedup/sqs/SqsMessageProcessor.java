package dev.dedup.sqs;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.sqs.BatchWalk.Step;
import dev.dedup.sqs.MessageOutcome.Disposition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * Effectively-once processing for an SQS receive loop, standard or FIFO queue:
 *
 * <pre>{@code
 * try (var processor = SqsMessageProcessor.builder(sqs, queueUrl, store, ResultCodec.none()).build()) {
 *     while (running) {
 *         processor.poll(Duration.ofSeconds(20), message -> { reserve(message.body()); return null; });
 *     }
 * }
 * }</pre>
 *
 * <p>Each {@link #poll} receives a batch with long polling, claims every message's key with one {@code claimAll},
 * runs the handler for each claimed message, and then settles the batch by outcome (see
 * {@link MessageOutcome.Disposition}):
 * <ul>
 *   <li>a message that took effect, here or before ({@code Processed}, {@code AlreadyProcessed}, {@code LeaseLost}),
 *       is deleted, with one {@code DeleteMessageBatch}; a delete that fails, for the batch or for one entry, is sent
 *       again with the next poll, and if it never gets through the message comes back and is deleted as
 *       {@code AlreadyProcessed};
 *   <li>a message that must come again (a retryable failure, a key held by another consumer) is left on the queue,
 *       its visibility timeout set to the retry back-off (doubled per receive) or to the end of the other consumer's
 *       lease;
 *   <li>a message that never can take effect ({@code AlreadyFailed}, {@code KeyReused}, a failure kept by
 *       {@code keepKeyOn} or {@link Builder#maxReceives}, no key) is sent to the {@link Builder#deadLetterQueue} and
 *       then deleted; without one it is left for the queue's redrive policy, which moves it to the queue's
 *       dead-letter queue at its {@code maxReceiveCount}.
 * </ul>
 * No message is deleted before its effect is recorded or its dead letter sent. While the batch is worked on, its
 * messages' visibility timeout is extended every third of it, beside the claims' lease heartbeats, so a slow handler's
 * message is not received by another consumer while it runs.
 *
 * <p>On a FIFO queue (its URL ends in {@code .fifo}) the messages of one message group are run in the order received,
 * and a group stops at its first message that must come again: its later messages in the batch are not run, and are
 * left with the same back-off, so the group comes back in order. Groups do not wait for each other.
 *
 * <p>An {@link Error} from the handler or the key function ends the poll: nothing of its batch is deleted and its
 * messages come back when their visibility timeout lapses (those that took effect as {@code AlreadyProcessed}).
 * A processor is for one thread; run one per thread for more throughput. Close it to stop its visibility timer.
 *
 * @param <R> the handler's result type
 */
public final class SqsMessageProcessor<R> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SqsMessageProcessor.class);
    /** Where the reason a message was dead-lettered goes, when it leaves room for one more attribute. */
    static final String REASON_ATTRIBUTE = "dedup-reason";

    private final SqsClient sqs;
    private final String queueUrl;
    private final boolean fifo;
    private final boolean settleInBatches;
    private final IdempotentConsumer<Message, R> consumer;
    private final ReceiveLimit receiveLimit;
    private final DeadLetterQueue deadLetters;
    private final int visibilitySeconds;
    private final int batchSize;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final ScheduledExecutorService timer;
    private final PendingDeletes pendingDeletes;

    private SqsMessageProcessor(Builder<R> builder) {
        this.sqs = builder.sqs;
        this.queueUrl = builder.queueUrl;
        this.fifo = isFifo(queueUrl);
        this.settleInBatches = builder.settleInBatches;
        this.receiveLimit = builder.maxReceives == 0 ? null : new ReceiveLimit(builder.maxReceives);
        Predicate<? super Exception> keep = receiveLimit == null ? builder.keepKeyOn
                : receiveLimit.keepKeyOn(builder.keepKeyOn);
        this.consumer = builder.consumers(keep).apply(builder.store);
        this.deadLetters = builder.deadLetterQueueUrl == null ? null
                : new DeadLetterQueue(sqs, builder.deadLetterQueueUrl);
        this.visibilitySeconds = builder.visibilitySeconds != 0 ? builder.visibilitySeconds
                : SqsRequests.seconds(builder.lease, SqsRequests.MAX_VISIBILITY_SECONDS);
        this.batchSize = builder.batchSize;
        this.initialBackoff = builder.initialBackoff;
        this.maxBackoff = builder.maxBackoff;
        this.pendingDeletes = new PendingDeletes(sqs, queueUrl);
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "dedup-sqs-visibility");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.timer = executor;
    }

    /**
     * Starts a processor for the queue at {@code queueUrl}, claiming keys on {@code store} and storing results with
     * {@code codec}.
     *
     * @param <R> the handler's result type
     * @param sqs the client the queue is read and settled with; the processor does not close it
     * @param queueUrl the queue's URL; a FIFO queue's ends in {@code .fifo}
     * @param store where the messages' keys are claimed
     * @param codec how handler results are stored for replay ({@link ResultCodec#none()} for none)
     * @return a builder with the defaults: keys from the {@code MessageId}, a 30 s lease and visibility timeout, 4 days
     *     retention, no failure kept, a retry back-off from 1 s doubling to 5 min, batches of 10, final failures left
     *     for the queue's redrive policy
     */
    public static <R> Builder<R> builder(SqsClient sqs, String queueUrl, DedupStore store, ResultCodec<R> codec) {
        return new Builder<>(sqs, queueUrl, store, codec);
    }

    /**
     * Sends the deletes a failure left for later, receives one batch (waiting up to {@code wait} for a message), and
     * processes and settles it.
     *
     * @param wait how long the receive may wait for a message (long polling): 0 to 20 s, in whole seconds
     * @param handler the business work for one message
     * @return what was done with each message received, in the order received; empty when none came
     * @throws IllegalArgumentException when {@code wait} is outside 0 to 20 s
     * @throws software.amazon.awssdk.core.exception.SdkException when the receive fails; the batch's other requests
     *     log their failures and leave the messages to come back
     */
    public List<MessageOutcome<R>> poll(Duration wait, MessageHandler<? super Message, ? extends R> handler) {
        int waitSeconds = SqsRequests.checkSeconds("wait", wait, 0);
        if (waitSeconds > SqsRequests.MAX_WAIT_SECONDS) {
            throw new IllegalArgumentException("wait must be 0 to 20 s (SQS's longest long poll), but was " + wait);
        }
        Objects.requireNonNull(handler, "handler");
        pendingDeletes.retry();
        List<Message> messages = sqs.receiveMessage(b -> b.queueUrl(queueUrl)
                .maxNumberOfMessages(batchSize)
                .waitTimeSeconds(waitSeconds)
                .visibilityTimeout(visibilitySeconds)
                .messageSystemAttributeNames(MessageSystemAttributeName.ALL)
                .messageAttributeNames("All")).messages();
        if (messages.isEmpty()) {
            return List.of();
        }
        MessageHandler<? super Message, ? extends R> counted = receiveLimit == null ? handler
                : receiveLimit.counting(handler);
        List<Step<R>> steps;
        try (VisibilityHeartbeat heartbeat = VisibilityHeartbeat.start(sqs, queueUrl, messages, visibilitySeconds,
                timer)) {
            steps = BatchWalk.walk(messages, fifo, BatchWalk.ordered(consumer, counted, settleInBatches));
        }
        return settle(steps);
    }

    /** Deletes, dead-letters or delays each message of a walked batch by what it needs. */
    private List<MessageOutcome<R>> settle(List<Step<R>> steps) {
        List<MessageOutcome<R>> outcomes = new ArrayList<>(steps.size());
        List<Message> deletes = new ArrayList<>();
        Map<Message, Integer> delays = new LinkedHashMap<>();
        Map<String, Integer> groupDelays = new HashMap<>();
        for (Step<R> step : steps) {
            Message message = step.message();
            Disposition disposition;
            int delay = 0;
            switch (step.need()) {
                case DONE -> {
                    deletes.add(message);
                    disposition = Disposition.DONE;
                }
                case FINAL -> {
                    if (deadLetters == null) {
                        delay = SqsRequests.seconds(initialBackoff, SqsRequests.MAX_VISIBILITY_SECONDS);
                        disposition = Disposition.REDRIVE;
                    } else if (deadLetters.send(message, step.outcome().orElseThrow())) {
                        deletes.add(message);
                        disposition = Disposition.DEAD_LETTERED;
                    } else {
                        delay = backoffSeconds(message);
                        disposition = Disposition.RETRY;
                    }
                }
                case RETRY -> {
                    delay = backoffSeconds(message);
                    disposition = Disposition.RETRY;
                }
                case HELD -> {
                    delay = untilLeaseEnds((ProcessingOutcome.InProgressElsewhere<R>) step.outcome().orElseThrow());
                    disposition = Disposition.RETRY;
                }
                default -> {   // BLOCKED: back with the message of its group that stopped it
                    delay = groupDelays.getOrDefault(BatchWalk.groupOf(message), backoffSeconds(message));
                    disposition = Disposition.RETRY;
                }
            }
            if (disposition != Disposition.DONE && disposition != Disposition.DEAD_LETTERED) {
                delays.put(message, delay);
                groupDelays.putIfAbsent(BatchWalk.groupOf(message), delay);
            }
            outcomes.add(new MessageOutcome<>(message, step.outcome(), disposition));
        }
        changeVisibility(delays);
        pendingDeletes.delete(deletes, Duration.ofSeconds(visibilitySeconds));
        return outcomes;
    }

    /** The retry back-off of a message: the initial one, doubled for each earlier receive, up to the longest. */
    private int backoffSeconds(Message message) {
        int doublings = Math.min(30, ReceiveLimit.receiveCount(message) - 1);
        Duration backoff = initialBackoff.multipliedBy(1L << doublings);
        return SqsRequests.seconds(backoff.compareTo(maxBackoff) > 0 ? maxBackoff : backoff,
                SqsRequests.MAX_VISIBILITY_SECONDS);
    }

    /** Until the other consumer's lease ends (when its key is free if it crashed), at least the initial back-off. */
    private int untilLeaseEnds(ProcessingOutcome.InProgressElsewhere<R> held) {
        Duration left = Duration.between(Instant.now(), held.leaseExpiresAt());
        return SqsRequests.seconds(left.compareTo(initialBackoff) > 0 ? left : initialBackoff,
                SqsRequests.MAX_VISIBILITY_SECONDS);
    }

    /** Sets each message's visibility timeout to its delay; a failure leaves it to the timeout it has. */
    private void changeVisibility(Map<Message, Integer> delays) {
        if (delays.isEmpty()) {
            return;
        }
        VisibilityChanges.apply(sqs, queueUrl, delays, "it comes back when its timeout lapses");
    }

    /** Sends the deletes a failure left for later, and stops the visibility timer. */
    @Override
    public void close() {
        try {
            pendingDeletes.retry();
        } finally {
            timer.shutdownNow();
        }
    }

    /** The messages deleted but not yet confirmed; for tests and metrics. */
    int pendingDeletes() {
        return pendingDeletes.size();
    }

    static boolean isFifo(String queueUrl) {
        return queueUrl.endsWith(".fifo");
    }

    /**
     * Settings for an {@link SqsMessageProcessor}; every setter checks its value at once.
     *
     * @param <R> the handler's result type
     */
    public static final class Builder<R> extends SqsConsumerSettings<R, Builder<R>> {
        private final SqsClient sqs;
        private final String queueUrl;
        private String deadLetterQueueUrl;
        private int maxReceives;
        private int visibilitySeconds;
        private int batchSize = SqsRequests.MAX_BATCH_ENTRIES;
        private Duration initialBackoff = Duration.ofSeconds(1);
        private Duration maxBackoff = Duration.ofMinutes(5);

        private Builder(SqsClient sqs, String queueUrl, DedupStore store, ResultCodec<R> codec) {
            super(store, codec);
            this.sqs = Objects.requireNonNull(sqs, "sqs");
            this.queueUrl = Objects.requireNonNull(queueUrl, "queueUrl");
        }

        /**
         * How long a received message stays invisible to other consumers (default: the lease, in whole seconds);
         * extended to this length every third of it while its batch is worked on.
         *
         * @param timeout 1 s to 12 h
         * @return this builder
         */
        public Builder<R> visibilityTimeout(Duration timeout) {
            this.visibilitySeconds = SqsRequests.checkSeconds("timeout", timeout, 1);
            return this;
        }

        /**
         * How long a message that must come again stays invisible (default 1 s, doubled for each receive of the
         * message, up to 5 min).
         *
         * @param initial the back-off after the first receive, 0 s to 12 h
         * @param max the longest back-off, from {@code initial} to 12 h
         * @return this builder
         */
        public Builder<R> retryBackoff(Duration initial, Duration max) {
            SqsRequests.checkSeconds("initial", initial, 0);
            SqsRequests.checkSeconds("max", max, 0);
            if (max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("max must not be shorter than initial (" + initial + "), but was "
                        + max);
            }
            this.initialBackoff = initial;
            this.maxBackoff = max;
            return this;
        }

        /**
         * A dead-letter queue the processor sends final failures to (then deletes them), instead of leaving them
         * for the queue's redrive policy: the body and message attributes are copied, with the reason in the
         * {@code dedup-reason} attribute when the message has fewer than 10. A FIFO queue's dead-letter queue must
         * be FIFO too; the copy keeps the message group, deduplicated by the original's {@code MessageId}.
         *
         * @param queueUrl the dead-letter queue's URL
         * @return this builder
         */
        public Builder<R> deadLetterQueue(String queueUrl) {
            this.deadLetterQueueUrl = Objects.requireNonNull(queueUrl, "queueUrl");
            return this;
        }

        /**
         * How many receives a message gets (default: no limit of the processor's own): a handler failure on a
         * message SQS has delivered that many times ({@code ApproximateReceiveCount}) is kept as final, and the
         * message goes to the {@link #deadLetterQueue}. Receives that found the key held by another consumer count
         * too. Without a dead-letter queue of the processor's, the queue's redrive policy ({@code maxReceiveCount})
         * is the limit.
         *
         * @param maxReceives 1 or more
         * @return this builder
         * @throws IllegalArgumentException when {@code maxReceives} is below 1
         */
        public Builder<R> maxReceives(int maxReceives) {
            if (maxReceives < 1) {
                throw new IllegalArgumentException("maxReceives must be at least 1, but was " + maxReceives);
            }
            this.maxReceives = maxReceives;
            return this;
        }

        /**
         * How many messages one receive asks for (default 10, SQS's most).
         *
         * @param size 1 to 10
         * @return this builder
         */
        public Builder<R> batchSize(int size) {
            if (size < 1 || size > SqsRequests.MAX_BATCH_ENTRIES) {
                throw new IllegalArgumentException("size must be 1 to 10 (SQS's most per receive), but was " + size);
            }
            this.batchSize = size;
            return this;
        }

        /**
         * Builds the processor, after reading the queue's attributes once: without a {@link #deadLetterQueue}, the
         * queue must have a redrive policy, or a final failure would come back forever; a retention shorter than
         * the queue's message retention period is logged as a warning.
         *
         * @return a processor for the builder's queue
         * @throws DedupConfigurationException when no dead-letter queue is configured and the queue has no
         *     {@code RedrivePolicy}
         * @throws IllegalStateException when {@link #maxReceives} is set without a {@link #deadLetterQueue}
         * @throws software.amazon.awssdk.core.exception.SdkException when the queue's attributes cannot be read
         */
        public SqsMessageProcessor<R> build() {
            if (maxReceives != 0 && deadLetterQueueUrl == null) {
                throw new IllegalStateException("maxReceives(" + maxReceives + ") needs deadLetterQueue(url): without"
                        + " it, the queue's redrive policy (its maxReceiveCount) is the limit");
            }
            Map<QueueAttributeName, String> attributes = sqs.getQueueAttributes(b -> b.queueUrl(queueUrl)
                    .attributeNames(QueueAttributeName.REDRIVE_POLICY, QueueAttributeName.MESSAGE_RETENTION_PERIOD))
                    .attributes();
            if (deadLetterQueueUrl == null && attributes.get(QueueAttributeName.REDRIVE_POLICY) == null) {
                throw new DedupConfigurationException("queue " + queueUrl + " has no RedrivePolicy, so a message that"
                        + " can never take effect would come back forever: give the queue a redrive policy with a"
                        + " dead-letter queue, or set deadLetterQueue(url) on the processor");
            }
            Optional.ofNullable(attributes.get(QueueAttributeName.MESSAGE_RETENTION_PERIOD))
                    .map(Long::parseLong).map(Duration::ofSeconds)
                    .filter(period -> retention.compareTo(period) < 0)
                    .ifPresent(period -> log.warn("retention {} is shorter than the message retention period {} of"
                            + " queue {}: a message received again after its key is forgotten runs again",
                            retention, period, queueUrl));
            return new SqsMessageProcessor<>(this);
        }
    }
}
