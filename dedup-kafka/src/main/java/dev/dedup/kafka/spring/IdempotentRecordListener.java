package dev.dedup.kafka.spring;

import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.DeadLetter;
import dev.dedup.kafka.RecordKeys;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
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
        RecordKeys<K, V> keys = builder.keys;
        IdempotentConsumer.Builder<ConsumerRecord<K, V>, R> settings = IdempotentConsumer
                .<ConsumerRecord<K, V>, R>builder(builder.store, keys::keyOf, builder.codec)
                .lease(builder.lease)
                .retention(builder.retention)
                .keepKeyOn(builder.keepKeyOn);
        if (builder.fingerprint != null) {
            settings.fingerprint(builder.fingerprint);
        }
        if (builder.describeFailure != null) {
            settings.failureDescription(builder.describeFailure);
        }
        if (builder.outcomeListener != null) {
            settings.onOutcome(builder.outcomeListener);
        }
        this.consumer = settings.build();
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
        String where = RecordKeys.where(record);
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere<R> held) {
            throw new KeyInProgressException(where, held.key(), held.leaseExpiresAt());
        }
        if (outcome instanceof ProcessingOutcome.AlreadyFailed<R> failed) {
            throw new DeadLetterRecordException(where, DeadLetter.Reason.ALREADY_FAILED, failed.key(),
                    failed.error().orElse(null), null);
        }
        if (outcome instanceof ProcessingOutcome.KeyReused<R> reused) {
            throw new DeadLetterRecordException(where, DeadLetter.Reason.KEY_REUSED, reused.key(),
                    "key " + reused.key() + " is held by a record with another payload fingerprint", null);
        }
        if (outcome instanceof ProcessingOutcome.Failed<R> failed) {
            if (failed.key() == null) {
                throw new DeadLetterRecordException(where, DeadLetter.Reason.NO_KEY, null,
                        String.valueOf(failed.cause().getMessage()), failed.cause());
            }
            if (failed.keyKept()) {
                throw new DeadLetterRecordException(where, DeadLetter.Reason.FAILED, failed.key(),
                        String.valueOf(failed.cause()), failed.cause());
            }
            if (!handlerRan[0]) {
                throw new StoreUnavailableException(where, failed.key(), failed.cause());
            }
            throw new RecordFailedException(where, failed.key(), failed.cause());
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
    public static final class Builder<K, V, R> {
        private final DedupStore store;
        private final ResultCodec<R> codec;
        private final MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler;
        private RecordKeys<K, V> keys = RecordKeys.header();
        private Duration lease = Duration.ofSeconds(30);
        private Duration retention = Duration.ofDays(1);
        private Predicate<? super Exception> keepKeyOn = failure -> false;
        private Function<? super Exception, String> describeFailure;
        private Function<? super ConsumerRecord<K, V>, byte[]> fingerprint;
        private Consumer<? super ProcessingOutcome<?>> outcomeListener;

        private Builder(DedupStore store, ResultCodec<R> codec,
                MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler) {
            this.store = Objects.requireNonNull(store, "store");
            this.codec = Objects.requireNonNull(codec, "codec");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * Where each record's key comes from (default: the {@value RecordKeys#DEFAULT_HEADER} header).
         *
         * @param keys the key of a record
         * @return this builder
         */
        public Builder<K, V, R> keys(RecordKeys<K, V> keys) {
            this.keys = Objects.requireNonNull(keys, "keys");
            return this;
        }

        /**
         * How long a claim holds before another consumer may take over (default 30 s); heartbeats renew it.
         *
         * @param lease longer than the slowest handler
         * @return this builder
         */
        public Builder<K, V, R> lease(Duration lease) {
            this.lease = DedupLimits.checkDuration("lease", lease);
            return this;
        }

        /**
         * How long a completed key is remembered (default 1 day): longer than the longest replay of the topic.
         *
         * @param retention longer than any redelivery or replay
         * @return this builder
         */
        public Builder<K, V, R> retention(Duration retention) {
            this.retention = DedupLimits.checkDuration("retention", retention);
            return this;
        }

        /**
         * Failures that retrying cannot fix: their key is stored as failed and the record is dead-lettered
         * ({@link DeadLetterRecordException}). Every other handler failure is retried ({@link RecordFailedException}).
         *
         * @param nonRetryable true for a failure that a retry cannot fix
         * @return this builder
         */
        public Builder<K, V, R> keepKeyOn(Predicate<? super Exception> nonRetryable) {
            this.keepKeyOn = Objects.requireNonNull(nonRetryable, "nonRetryable");
            return this;
        }

        /**
         * Stores a fingerprint of each record's payload with its key (default: none), so another record that reuses
         * a live key with a different payload is dead-lettered ({@link DeadLetterRecordException} with
         * {@link DeadLetter.Reason#KEY_REUSED}) instead of being taken for a redelivery; see
         * {@link IdempotentConsumer.Builder#fingerprint}.
         *
         * @param fingerprint maps a record to 1 to {@link dev.dedup.DedupLimits#MAX_FINGERPRINT_BYTES} bytes (such as
         *     the SHA-256 of its value), or to null for none
         * @return this builder
         */
        public Builder<K, V, R> fingerprint(Function<? super ConsumerRecord<K, V>, byte[]> fingerprint) {
            this.fingerprint = Objects.requireNonNull(fingerprint, "fingerprint");
            return this;
        }

        /**
         * What a kept failure stores for its redeliveries (default: the exception's class and message).
         *
         * @param describe the stored description of a failure, or null for none
         * @return this builder
         */
        public Builder<K, V, R> failureDescription(Function<? super Exception, String> describe) {
            this.describeFailure = Objects.requireNonNull(describe, "describe");
            return this;
        }

        /**
         * Called with every record's outcome, on the consumer thread, after its store calls: for metrics (see
         * dedup-micrometer) or logging. An exception it throws is logged and changes nothing.
         *
         * @param listener takes each outcome
         * @return this builder
         */
        public Builder<K, V, R> onOutcome(Consumer<? super ProcessingOutcome<?>> listener) {
            this.outcomeListener = Objects.requireNonNull(listener, "listener");
            return this;
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
