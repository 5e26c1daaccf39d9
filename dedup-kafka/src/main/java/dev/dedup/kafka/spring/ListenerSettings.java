package dev.dedup.kafka.spring;

import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
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

/**
 * The settings both Spring Kafka listeners share ({@link IdempotentRecordListener.Builder},
 * {@link IdempotentBatchListener.Builder}): where keys come from, the lease, the retention, which failures are final.
 * Every setter checks its value at once.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 * @param <B> the builder's own type, which every setter returns
 */
public abstract class ListenerSettings<K, V, R, B extends ListenerSettings<K, V, R, B>> {
    private final DedupStore store;
    private final ResultCodec<R> codec;
    private RecordKeys<K, V> keys = RecordKeys.header();
    private Duration lease = Duration.ofSeconds(30);
    private Duration retention = Duration.ofDays(1);
    private Predicate<? super Exception> keepKeyOn = failure -> false;
    private Function<? super Exception, String> describeFailure;
    private Function<? super ConsumerRecord<K, V>, byte[]> fingerprint;
    private Consumer<? super ProcessingOutcome<?>> outcomeListener;

    ListenerSettings(DedupStore store, ResultCodec<R> codec) {
        this.store = Objects.requireNonNull(store, "store");
        this.codec = Objects.requireNonNull(codec, "codec");
    }

    /**
     * Where each record's key comes from (default: the {@value RecordKeys#DEFAULT_HEADER} header).
     *
     * @param keys the key of a record
     * @return this builder
     */
    public B keys(RecordKeys<K, V> keys) {
        this.keys = Objects.requireNonNull(keys, "keys");
        return self();
    }

    /**
     * How long a claim holds before another consumer may take over (default 30 s); heartbeats renew it.
     *
     * @param lease longer than the slowest handler
     * @return this builder
     */
    public B lease(Duration lease) {
        this.lease = DedupLimits.checkDuration("lease", lease);
        return self();
    }

    /**
     * How long a completed key is remembered (default 1 day): longer than the longest replay of the topic.
     *
     * @param retention longer than any redelivery or replay
     * @return this builder
     */
    public B retention(Duration retention) {
        this.retention = DedupLimits.checkDuration("retention", retention);
        return self();
    }

    /**
     * Failures that retrying cannot fix: their key is stored as failed and the record is dead-lettered
     * ({@link DeadLetterRecordException}). Every other handler failure is retried ({@link RecordFailedException}).
     *
     * @param nonRetryable true for a failure that a retry cannot fix
     * @return this builder
     */
    public B keepKeyOn(Predicate<? super Exception> nonRetryable) {
        this.keepKeyOn = Objects.requireNonNull(nonRetryable, "nonRetryable");
        return self();
    }

    /**
     * Stores a fingerprint of each record's payload with its key (default: none), so another record that reuses
     * a live key with a different payload is dead-lettered ({@link DeadLetterRecordException} with
     * {@link DeadLetter.Reason#KEY_REUSED}) instead of being taken for a redelivery; see
     * {@link IdempotentConsumer.Builder#fingerprint}.
     *
     * @param fingerprint maps a record to 1 to {@link DedupLimits#MAX_FINGERPRINT_BYTES} bytes (such as the SHA-256
     *     of its value), or to null for none
     * @return this builder
     */
    public B fingerprint(Function<? super ConsumerRecord<K, V>, byte[]> fingerprint) {
        this.fingerprint = Objects.requireNonNull(fingerprint, "fingerprint");
        return self();
    }

    /**
     * What a kept failure stores for its redeliveries (default: the exception's class and message).
     *
     * @param describe the stored description of a failure, or null for none
     * @return this builder
     */
    public B failureDescription(Function<? super Exception, String> describe) {
        this.describeFailure = Objects.requireNonNull(describe, "describe");
        return self();
    }

    /**
     * Called with every record's outcome, on the consumer thread, after its store calls: for metrics (see
     * dedup-micrometer) or logging. An exception it throws is logged and changes nothing.
     *
     * @param listener takes each outcome
     * @return this builder
     */
    public B onOutcome(Consumer<? super ProcessingOutcome<?>> listener) {
        this.outcomeListener = Objects.requireNonNull(listener, "listener");
        return self();
    }

    /** The builder itself, typed as its subclass: the one unchecked cast of the self-typed builder. */
    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    final RecordKeys<K, V> keys() {
        return keys;
    }

    /** The idempotent consumer these settings describe. */
    final IdempotentConsumer<ConsumerRecord<K, V>, R> consumer() {
        RecordKeys<K, V> recordKeys = keys;
        IdempotentConsumer.Builder<ConsumerRecord<K, V>, R> settings = IdempotentConsumer
                .<ConsumerRecord<K, V>, R>builder(store, recordKeys::keyOf, codec)
                .lease(lease)
                .retention(retention)
                .keepKeyOn(keepKeyOn);
        if (fingerprint != null) {
            settings.fingerprint(fingerprint);
        }
        if (describeFailure != null) {
            settings.failureDescription(describeFailure);
        }
        if (outcomeListener != null) {
            settings.onOutcome(outcomeListener);
        }
        return settings.build();
    }
}
