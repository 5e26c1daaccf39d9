package dev.dedup.sqs;

import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ResultCodec;
import dev.dedup.sqs.BatchWalk.Need;
import dev.dedup.sqs.BatchWalk.Step;
import dev.dedup.sqs.SqsBatchResponse.BatchItemFailure;
import dev.dedup.sqs.SqsEvent.SqsMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * Effectively-once processing for a function an SQS event source invokes with a batch (AWS Lambda with
 * {@code ReportBatchItemFailures}), without the Lambda runtime on the class path:
 *
 * <pre>{@code
 * SqsBatchResponse response = handler.handle(event, Duration.ofMillis(context.getRemainingTimeInMillis()),
 *         message -> { reserve(message.body()); return null; });
 * }</pre>
 *
 * <p>It walks the batch as {@link SqsMessageProcessor} does (one {@code claimAll}, the handler per claimed message,
 * FIFO message groups in order, each stopped at its first message that must come again) and answers with the
 * messages that are not to be deleted: those that must come again (a retryable failure, a key held elsewhere, behind
 * such a message in its FIFO group) and those that can never take effect ({@code AlreadyFailed}, {@code KeyReused}, a
 * kept failure, no key), which come back until the queue's redrive policy moves them to its dead-letter queue at its
 * {@code maxReceiveCount}. Every other message, processed here or before, is deleted by the event source.
 *
 * <p>The invocation's remaining time bounds every claim's lease (and each heartbeat's renewal): a function stopped at
 * its timeout leaves no claim behind that outlives it. Set the queue's visibility timeout above the function's
 * timeout, as for any SQS-triggered function. Thread-safe: one handler serves every invocation.
 *
 * @param <R> the handler's result type
 */
public final class SqsBatchHandler<R> {
    private final DedupStore store;
    private final Function<DedupStore, IdempotentConsumer<Message, R>> consumers;
    private final boolean settleInBatches;

    private SqsBatchHandler(Builder<R> builder) {
        this.store = builder.store;
        this.consumers = builder.consumers(builder.keepKeyOn);
        this.settleInBatches = builder.settleInBatches;
    }

    /**
     * Starts a handler claiming keys on {@code store} and storing results with {@code codec}.
     *
     * @param <R> the handler's result type
     * @param store where the messages' keys are claimed
     * @param codec how handler results are stored for replay ({@link ResultCodec#none()} for none)
     * @return a builder with the defaults: keys from the {@code MessageId}, a 30 s lease (bounded by the remaining
     *     time), 4 days retention, no failure kept
     */
    public static <R> Builder<R> builder(DedupStore store, ResultCodec<R> codec) {
        return new Builder<>(store, codec);
    }

    /**
     * Processes one invocation's batch.
     *
     * @param event the batch
     * @param remainingTime the invocation's remaining time ({@code context.getRemainingTimeInMillis()}); no claim
     *     outlives it, and with none left no message is run and all are reported as failures
     * @param handler the business work for one message, given as the SDK's {@link Message} (its system attributes
     *     and string message attributes filled from the event)
     * @return the messages not to be deleted, in the batch's order
     */
    public SqsBatchResponse handle(SqsEvent event, Duration remainingTime,
            MessageHandler<? super Message, ? extends R> handler) {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(remainingTime, "remainingTime");
        Objects.requireNonNull(handler, "handler");
        List<Message> messages = new ArrayList<>(event.records().size());
        boolean fifo = false;
        for (SqsMessage record : event.records()) {
            messages.add(toMessage(record));
            fifo |= record.eventSourceArn() != null && SqsMessageProcessor.isFifo(record.eventSourceArn());
        }
        Set<String> failures = new LinkedHashSet<>();
        if (remainingTime.isNegative() || remainingTime.isZero()) {
            messages.forEach(message -> failures.add(message.messageId()));
        } else {
            long deadline = System.nanoTime() + remainingTime.toNanos();
            IdempotentConsumer<Message, R> consumer = consumers.apply(new DeadlineStore(store, deadline));
            for (Step<R> step : BatchWalk.walk(messages, fifo,
                    BatchWalk.ordered(consumer, handler, settleInBatches))) {
                if (step.need() != Need.DONE) {
                    failures.add(step.message().messageId());
                }
            }
        }
        List<BatchItemFailure> items = new ArrayList<>(failures.size());
        failures.forEach(id -> items.add(new BatchItemFailure(id)));
        return new SqsBatchResponse(items);
    }

    /** The event's message as the SDK's, so keys and handlers are the same as the receive loop's. */
    static Message toMessage(SqsMessage record) {
        Map<String, MessageAttributeValue> attributes = new HashMap<>();
        record.messageAttributes().forEach((name, value) -> attributes.put(name,
                MessageAttributeValue.builder().dataType("String").stringValue(value).build()));
        return Message.builder().messageId(record.messageId()).receiptHandle(record.receiptHandle())
                .body(record.body()).attributesWithStrings(record.attributes()).messageAttributes(attributes).build();
    }

    /**
     * Settings for an {@link SqsBatchHandler}; every setter checks its value at once.
     *
     * @param <R> the handler's result type
     */
    public static final class Builder<R> extends SqsConsumerSettings<R, Builder<R>> {
        private Builder(DedupStore store, ResultCodec<R> codec) {
            super(store, codec);
        }

        /** {@return a handler with these settings; the builder may be reused for another} */
        public SqsBatchHandler<R> build() {
            return new SqsBatchHandler<>(this);
        }
    }
}
