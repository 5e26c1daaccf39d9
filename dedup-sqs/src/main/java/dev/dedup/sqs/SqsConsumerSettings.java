package dev.dedup.sqs;

import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * The settings {@link SqsMessageProcessor.Builder} and {@link SqsBatchHandler.Builder} share: how messages are keyed,
 * claimed and remembered. Every setter checks its value at once.
 *
 * @param <R> the handler's result type
 * @param <B> the builder's own type
 */
public abstract class SqsConsumerSettings<R, B extends SqsConsumerSettings<R, B>> {
    final DedupStore store;
    final ResultCodec<R> codec;
    Function<Message, String> keys = SqsKeys.messageId();
    Duration lease = Duration.ofSeconds(30);
    Duration retention = Duration.ofDays(4);
    Predicate<? super Exception> keepKeyOn = failure -> false;
    Function<? super Exception, String> describeFailure;
    Consumer<? super ProcessingOutcome<?>> outcomeListener;
    boolean settleInBatches;

    SqsConsumerSettings(DedupStore store, ResultCodec<R> codec) {
        this.store = Objects.requireNonNull(store, "store");
        this.codec = Objects.requireNonNull(codec, "codec");
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * Where each message's key comes from (default: {@link SqsKeys#messageId()}).
     *
     * @param keys the key of a message, such as {@link SqsKeys#messageAttribute}
     * @return this builder
     */
    public B keys(Function<Message, String> keys) {
        this.keys = Objects.requireNonNull(keys, "keys");
        return self();
    }

    /**
     * How long a claim holds before another consumer may take over (default 30 s); heartbeats renew it while the
     * handler runs, and for the messages of a batch that wait for the ones before them.
     *
     * @param lease longer than the slowest handler's store calls; see the docs on visibility and lease
     * @return this builder
     */
    public B lease(Duration lease) {
        this.lease = DedupLimits.checkDuration("lease", lease);
        return self();
    }

    /**
     * How long a completed key is remembered (default 4 days, SQS's default message retention period): at least the
     * queue's {@code MessageRetentionPeriod}, and longer if messages are moved back from a dead-letter queue or sent
     * again later.
     *
     * @param retention longer than any redelivery or replay
     * @return this builder
     */
    public B retention(Duration retention) {
        this.retention = DedupLimits.checkDuration("retention", retention);
        return self();
    }

    /**
     * Failures that retrying cannot fix: the key is stored as failed and the message is dead-lettered. Every other
     * handler failure leaves the message on the queue for a retry.
     *
     * @param nonRetryable true for a failure that a retry cannot fix (default: none)
     * @return this builder
     */
    public B keepKeyOn(Predicate<? super Exception> nonRetryable) {
        this.keepKeyOn = Objects.requireNonNull(nonRetryable, "nonRetryable");
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
     * Called with every message's outcome, after its store calls: for metrics (see dedup-micrometer) or logging. An
     * exception it throws is logged and changes nothing.
     *
     * @param listener takes each outcome
     * @return this builder
     */
    public B onOutcome(Consumer<? super ProcessingOutcome<?>> listener) {
        this.outcomeListener = Objects.requireNonNull(listener, "listener");
        return self();
    }

    /**
     * Settles a batch's claims with one {@link DedupStore#settleAll} after its handlers ran, instead of one store
     * call per message as they run: two store round trips per batch (the {@code claimAll} and the settle) whatever
     * its size, for a wider crash window. A crash after a message's effect and before the batch's settle runs every
     * message of the batch whose handler ran again once its lease lapses, not only the one in flight (see
     * {@link IdempotentConsumer#processInOrderSettlingOnce}).
     *
     * @return this builder
     */
    public B settleInBatches() {
        this.settleInBatches = true;
        return self();
    }

    /**
     * Makes idempotent consumers with these settings (as they are now, whatever the builder is set to later) on a
     * given store or view of it, keeping the failures {@code keep} says.
     */
    Function<DedupStore, IdempotentConsumer<Message, R>> consumers(Predicate<? super Exception> keep) {
        Function<Message, String> keyOf = keys;
        ResultCodec<R> resultCodec = codec;
        Duration claimLease = lease;
        Duration keptFor = retention;
        Function<? super Exception, String> describe = describeFailure;
        Consumer<? super ProcessingOutcome<?>> listener = outcomeListener;
        return on -> {
            IdempotentConsumer.Builder<Message, R> settings = IdempotentConsumer.builder(on, keyOf, resultCodec)
                    .lease(claimLease)
                    .retention(keptFor)
                    .keepKeyOn(keep);
            if (describe != null) {
                settings.failureDescription(describe);
            }
            if (listener != null) {
                settings.onOutcome(listener);
            }
            return settings.build();
        };
    }
}
