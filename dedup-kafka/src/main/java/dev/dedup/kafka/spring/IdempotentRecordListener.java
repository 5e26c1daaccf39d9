package dev.dedup.kafka.spring;

import dev.dedup.DedupException;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.RecordKeys;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.MessageListener;

/**
 * A Spring Kafka record listener that runs each record through {@link IdempotentConsumer} and answers with the
 * container's semantics. Set it as a container's listener, or call {@link #onMessage} from a {@code @KafkaListener}
 * method:
 *
 * <pre>{@code
 * IdempotentRecordListener<String, String, Void> dedup = IdempotentRecordListener
 *         .<String, String, Void>builder(store, ResultCodec.none(), record -> {
 *             reserve(record.value());
 *             return null;
 *         })
 *         .keepKeyOn(e -> e instanceof UnknownSkuException)
 *         .build();
 *
 * @KafkaListener(topics = "orders")
 * public void onOrder(ConsumerRecord<String, String> record) {
 *     dedup.onMessage(record);
 * }
 * }</pre>
 *
 * <ul>
 *   <li>{@code Processed}, {@code AlreadyProcessed}, {@code LeaseLost}: it returns, and the container commits the
 *       record (the work is done, here or before);
 *   <li>{@code InProgressElsewhere}: it throws {@link KeyInProgressException}, and a retryable {@code Failed} (the
 *       key was released) throws {@link RecordFailedException}: the error handler seeks back to the record, so no
 *       offset passes it, and retries it after its back-off;
 *   <li>a record that never can take effect ({@code AlreadyFailed}, {@code KeyReused}, {@code Failed} with its key
 *       kept, or no key) throws {@link DeadLetterRecordException}, which {@link DedupErrorHandler} marks not
 *       retryable: the recoverer dead-letters the record at once and the container commits past it.
 * </ul>
 *
 * <p>The container needs {@code AckMode.RECORD} or {@code BATCH} (the default) and the error handler that
 * {@link DedupErrorHandler#create} builds, with a {@code DeadLetterPublishingRecoverer}: the default error handler
 * would retry a dead letter ten times and then only log it. Thread-safe: one listener serves every consumer thread
 * of a concurrent container.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 */
public final class IdempotentRecordListener<K, V, R> implements MessageListener<K, V> {
    private final IdempotentConsumer<ConsumerRecord<K, V>, R> consumer;
    private final MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler;

    private IdempotentRecordListener(Builder<K, V, R> builder) {
        this.consumer = builder.consumer();
        this.handler = builder.handler;
    }

    /**
     * Starts a listener that runs {@code handler} for each record once per key, on {@code store}, storing results
     * with {@code codec}.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param <R> the handler's result type
     * @param store where the records' keys are claimed; the listener does not close it
     * @param codec how handler results are stored for replay ({@link ResultCodec#none()} for none)
     * @param handler the business work for one record
     * @return a builder with the defaults: keys from the {@value RecordKeys#DEFAULT_HEADER} header, a 30 s lease,
     *     1 day retention, no failure kept
     */
    public static <K, V, R> Builder<K, V, R> builder(DedupStore store, ResultCodec<R> codec,
            MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler) {
        return new Builder<>(store, codec, handler);
    }

    /**
     * Processes one record, and returns only when the container may commit past it.
     *
     * @param record the record as the container received it
     * @throws KeyInProgressException when another consumer holds the record's key (retryable)
     * @throws RecordFailedException when the handler or the store failed and the key was released (retryable)
     * @throws StoreUnavailableException when the claim failed, so the handler did not run (retryable, no limit)
     * @throws DeadLetterRecordException when the record can never take effect (not retryable: dead-letter it)
     */
    @Override
    public void onMessage(ConsumerRecord<K, V> record) {
        process(record);
    }

    /**
     * Processes one record like {@link #onMessage}, and returns what was done with it.
     *
     * @param record the record as the container received it
     * @return the outcome: {@code Processed}, {@code AlreadyProcessed} (with the stored result) or {@code LeaseLost}
     * @throws KeyInProgressException when another consumer holds the record's key (retryable)
     * @throws RecordFailedException when the handler or the store failed and the key was released (retryable)
     * @throws StoreUnavailableException when the claim failed, so the handler did not run (retryable, no limit)
     * @throws DeadLetterRecordException when the record can never take effect (not retryable: dead-letter it)
     */
    public ProcessingOutcome<R> process(ConsumerRecord<K, V> record) {
        Objects.requireNonNull(record, "record");
        boolean[] handlerRan = {false};
        ProcessingOutcome<R> outcome = consumer.process(record, claimed -> {
            handlerRan[0] = true;
            return handler.handle(claimed);
        });
        DedupException failure = ListenerFailures.of(record, outcome, handlerRan[0]);
        if (failure != null) {
            throw failure;
        }
        return outcome;     // Processed, AlreadyProcessed or LeaseLost: the work is done
    }

    /**
     * Settings for an {@link IdempotentRecordListener}; every setter checks its value at once.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param <R> the handler's result type
     */
    public static final class Builder<K, V, R> extends ListenerSettings<K, V, R, Builder<K, V, R>> {
        private final MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler;

        private Builder(DedupStore store, ResultCodec<R> codec,
                MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler) {
            super(store, codec);
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * Builds the listener.
         *
         * @return a listener for the builder's store and handler
         */
        public IdempotentRecordListener<K, V, R> build() {
            return new IdempotentRecordListener<>(this);
        }
    }
}
