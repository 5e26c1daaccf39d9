package dev.dedup.kafka;

import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.RecordOutcome.Disposition;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RetriableCommitFailedException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.IllegalGenerationException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Effectively-once processing for a plain {@link Consumer} poll loop (with {@code enable.auto.commit=false}):
 *
 * <pre>{@code
 * var processor = KafkaRecordProcessor.builder(consumer, store, ResultCodec.none())
 *         .deadLetters(new DeadLetterTopic<>(producer))
 *         .build();
 * while (running) {
 *     processor.poll(Duration.ofMillis(500), record -> { reserve(record.value()); return null; });
 * }
 * }</pre>
 *
 * <p>For each partition of a poll it claims every record's key with one {@code claimAll}, runs the handler for each
 * claimed record in partition order ({@link IdempotentConsumer#processInOrder}), and then commits:
 * <ul>
 *   <li>a record that took effect, here or before ({@code Processed}, {@code AlreadyProcessed}, {@code LeaseLost}), is
 *       committed past;
 *   <li>a record that never can ({@code AlreadyFailed}, {@code KeyReused}, {@code Failed} with its key kept, or no
 *       key at all) goes to the {@link DeadLetterHandler} and is then committed past;
 *   <li>the first record that must come again ({@code InProgressElsewhere}, a retryable {@code Failed}, or a dead
 *       letter that could not be stored) stops its partition: the offset is committed up to it, never past it, the
 *       partition is sought back to it and paused for the retry back-off, and the records after it are not run.
 * </ul>
 *
 * <p>Two opt-in modes change how a partition batch is settled, never its outcome rules: {@link
 * Builder#settleInBatches()} settles the batch's claims with one {@link DedupStore#settleAll} after its handlers ran
 * (two store round trips per batch, for a crash window as wide as the batch), and {@link Builder#inbox} runs the
 * batch's claims, the handler's writes and the settle in one database transaction, committed before the offsets
 * (poll with an {@link InboxHandler}).
 *
 * <p>An exception that escapes a poll (an {@link Error} from the handler, the key function or the dead-letter handler)
 * first seeks each partition of the poll back to its first record not yet settled, so the caller's next poll reads
 * them again; the offsets settled before it are committed with the next commit. A commit that fails during a
 * rebalance the member stays in ({@link RebalanceInProgressException}), or that throws, is tried again with the next
 * commit, for the partitions still assigned then.
 *
 * <p>Like the consumer it drives, a processor is for one thread. Call {@link #poll} (or {@link #process} with every
 * poll's records, empty ones included) in the loop: paused partitions are resumed there when their back-off ends.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 */
public final class KafkaRecordProcessor<K, V, R> {
    private static final Logger log = LoggerFactory.getLogger(KafkaRecordProcessor.class);

    private final Consumer<K, V> consumer;
    private final IdempotentConsumer<ConsumerRecord<K, V>, R> idempotent;
    private final DeadLetterHandler<K, V> deadLetters;
    private final Duration retryBackoff;
    private final boolean commitOffsets;
    private final AttemptLimit<K, V> attempts;
    private final boolean settleInBatches;
    /** The inbox mode's transactions, or null outside it. */
    private final KafkaInbox<K, V, R> inbox;
    /** Partitions paused after a rewind, with the System.nanoTime at which they may be read again. */
    private final Map<TopicPartition, Long> resumeAt = new HashMap<>();
    /**
     * Offsets settled but not committed yet (the commit failed while the member kept its partitions, or the poll
     * ended in an exception): committed with the next commit, for the partitions still assigned then.
     */
    private final Map<TopicPartition, OffsetAndMetadata> uncommitted = new HashMap<>();

    private KafkaRecordProcessor(Builder<K, V, R> builder) {
        this.consumer = builder.consumer;
        this.deadLetters = builder.deadLetters;
        this.retryBackoff = builder.retryBackoff;
        this.commitOffsets = builder.commitOffsets;
        this.attempts = new AttemptLimit<>(builder.maxAttempts);
        RecordKeys<K, V> keys = builder.keys;
        IdempotentConsumer.Builder<ConsumerRecord<K, V>, R> settings = IdempotentConsumer
                .<ConsumerRecord<K, V>, R>builder(builder.store, keys::keyOf, builder.codec)
                .lease(builder.lease)
                .retention(builder.retention)
                .keepKeyOn(attempts.keepKeyOn(builder.keepKeyOn));
        if (builder.fingerprint != null) {
            settings.fingerprint(builder.fingerprint);
        }
        if (builder.describeFailure != null) {
            settings.failureDescription(builder.describeFailure);
        }
        if (builder.outcomeListener != null) {
            settings.onOutcome(builder.outcomeListener);
        }
        this.idempotent = settings.build();
        this.settleInBatches = builder.settleInBatches;
        this.inbox = builder.inboxDataSource == null ? null : new KafkaInbox<>(builder.inboxDataSource,
                builder.inboxViews, idempotent, keys, attempts);
    }

    /**
     * Starts a processor for {@code consumer}, which must not auto-commit, on {@code store}, storing results with
     * {@code codec}.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param <R> the handler's result type
     * @param consumer the consumer whose records this processes and whose offsets it commits
     * @param store where the records' keys are claimed
     * @param codec how handler results are stored for replay ({@link ResultCodec#none()} for none)
     * @return a builder with the defaults: keys from the {@value RecordKeys#DEFAULT_HEADER} header, a 30 s lease,
     *     1 day retention, no failure kept, no attempt limit, a 1 s retry back-off, offsets committed by the
     *     processor
     */
    public static <K, V, R> Builder<K, V, R> builder(Consumer<K, V> consumer, DedupStore store,
            ResultCodec<R> codec) {
        return new Builder<>(consumer, store, codec);
    }

    /**
     * Resumes the partitions whose retry back-off is over, polls once, and processes what the poll returned.
     *
     * @param timeout how long the poll may wait for records
     * @param handler the business work for one record
     * @return what was done with the records
     * @throws IllegalStateException when the processor was built with {@link Builder#inbox}: its handler takes the
     *     transaction's connection
     */
    public PollResult<K, V, R> poll(Duration timeout,
            MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler) {
        Objects.requireNonNull(handler, "handler");
        requireInbox(false);    // before the poll moves the position past the records
        resumeDue();
        return process(consumer.poll(timeout), handler);
    }

    /**
     * The inbox mode's poll ({@link Builder#inbox}): resumes the partitions whose retry back-off is over, polls once,
     * and processes what the poll returned, one database transaction per partition batch.
     *
     * @param timeout how long the poll may wait for records
     * @param handler the database work for one record, through the transaction's connection
     * @return what was done with the records
     * @throws IllegalStateException when the processor was built without {@link Builder#inbox}
     */
    public PollResult<K, V, R> poll(Duration timeout, InboxHandler<K, V, R> handler) {
        Objects.requireNonNull(handler, "handler");
        requireInbox(true);
        resumeDue();
        return process(consumer.poll(timeout), handler);
    }

    /**
     * Processes one poll's records and commits (or, with {@link Builder#commitOffsets(boolean) commitOffsets(false)},
     * returns) the offsets they allow; resumes the partitions whose retry back-off is over.
     *
     * @param records what the consumer's last poll returned
     * @param handler the business work for one record
     * @return what was done with the records
     * @throws IllegalStateException when the processor was built with {@link Builder#inbox}
     */
    public PollResult<K, V, R> process(ConsumerRecords<K, V> records,
            MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler) {
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(handler, "handler");
        requireInbox(false);
        MessageHandler<? super ConsumerRecord<K, V>, ? extends R> counted = attempts.counting(handler);
        return processWith(records, batch -> settleInBatches ? idempotent.processInOrderSettlingOnce(batch, counted)
                : idempotent.processInOrder(batch, counted));
    }

    /**
     * The inbox mode's {@link #process(ConsumerRecords, MessageHandler) process}: one database transaction per
     * partition batch, committed before the offsets.
     *
     * @param records what the consumer's last poll returned
     * @param handler the database work for one record, through the transaction's connection
     * @return what was done with the records
     * @throws IllegalStateException when the processor was built without {@link Builder#inbox}
     */
    public PollResult<K, V, R> process(ConsumerRecords<K, V> records, InboxHandler<K, V, R> handler) {
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(handler, "handler");
        requireInbox(true);
        return processWith(records, batch -> inbox.walk(batch, handler));
    }

    private void requireInbox(boolean inboxHandler) {
        if (inboxHandler && inbox == null) {
            throw new IllegalStateException("an InboxHandler needs a processor built with inbox(dataSource, views)");
        }
        if (!inboxHandler && inbox != null) {
            throw new IllegalStateException("this processor was built with inbox(...): poll with an InboxHandler,"
                    + " which writes through the partition batch's transaction");
        }
    }

    /** How one partition batch is run: its outcomes, in order, as {@link IdempotentConsumer#processInOrder} says. */
    @FunctionalInterface
    private interface Walk<K, V, R> {
        List<ProcessingOutcome<R>> run(List<ConsumerRecord<K, V>> batch);
    }

    private PollResult<K, V, R> processWith(ConsumerRecords<K, V> records, Walk<K, V, R> walk) {
        resumeDue();
        attempts.forgetUnassigned(consumer::assignment);
        List<RecordOutcome<K, V, R>> outcomes = new ArrayList<>(records.count());
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        Map<TopicPartition, Long> rewound = new LinkedHashMap<>();
        Map<TopicPartition, Long> unsettled = firstOffsets(records);
        try {
            for (TopicPartition partition : records.partitions()) {
                List<ConsumerRecord<K, V>> batch = records.records(partition);
                long next = processPartition(partition, batch, walk, outcomes, unsettled);
                unsettled.remove(partition);
                if (next > batch.get(0).offset()) {
                    offsets.put(partition, new OffsetAndMetadata(next));
                }
                if (next <= batch.get(batch.size() - 1).offset()) {
                    rewind(partition, next);
                    rewound.put(partition, next);
                }
            }
        } catch (Throwable failure) {
            abandon(records, unsettled, offsets, failure);
            throw failure;
        }
        Map<TopicPartition, OffsetAndMetadata> toCommit = withUncommitted(offsets);
        return new PollResult<>(outcomes, toCommit, rewound, commit(toCommit));
    }

    /** The offset of each partition's first record: none is settled yet. */
    private static Map<TopicPartition, Long> firstOffsets(ConsumerRecords<?, ?> records) {
        Map<TopicPartition, Long> first = new HashMap<>();
        for (TopicPartition partition : records.partitions()) {
            first.put(partition, records.records(partition).get(0).offset());
        }
        return first;
    }

    /**
     * After an exception mid-poll (an {@link Error} from the handler, the key function or the dead-letter handler):
     * the consumer's position is past every record of the poll, so each partition not walked to its end is sought
     * back to its first unsettled record, or the caller's next poll would skip them and a later commit pass them.
     * What was settled is committed with the next commit.
     */
    private void abandon(ConsumerRecords<K, V> records, Map<TopicPartition, Long> unsettled,
            Map<TopicPartition, OffsetAndMetadata> settled, Throwable failure) {
        for (Map.Entry<TopicPartition, Long> entry : unsettled.entrySet()) {
            TopicPartition partition = entry.getKey();
            long offset = entry.getValue();
            try {
                seekBack(partition, offset, false);
            } catch (RuntimeException e) {
                failure.addSuppressed(e);
            }
            if (offset > records.records(partition).get(0).offset()) {
                settled.put(partition, new OffsetAndMetadata(offset));
            }
        }
        if (commitOffsets) {
            uncommitted.putAll(settled);
        }
    }

    /**
     * Runs one partition's records and settles each outcome.
     *
     * @return the offset the partition may be committed to: the first record that must come again, or the one after
     *     the last record
     */
    private long processPartition(TopicPartition partition, List<ConsumerRecord<K, V>> batch, Walk<K, V, R> walk,
            List<RecordOutcome<K, V, R>> outcomes, Map<TopicPartition, Long> unsettled) {
        List<ProcessingOutcome<R>> results = walk.run(batch);
        long next = batch.get(0).offset();
        for (int i = 0; i < results.size(); i++) {
            ConsumerRecord<K, V> record = batch.get(i);
            Disposition disposition = settle(record, results.get(i));
            outcomes.add(new RecordOutcome<>(record, results.get(i), disposition));
            if (disposition == Disposition.REDELIVER) {
                return record.offset();
            }
            attempts.settled(partition, record.offset());
            next = record.offset() + 1;
            unsettled.put(partition, next);
        }
        return next;
    }

    /** What an outcome means for the offset; hands the records that can never take effect to the dead letters. */
    private Disposition settle(ConsumerRecord<K, V> record, ProcessingOutcome<R> outcome) {
        if (outcome instanceof ProcessingOutcome.Processed || outcome instanceof ProcessingOutcome.AlreadyProcessed
                || outcome instanceof ProcessingOutcome.LeaseLost) {
            return Disposition.DONE;
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere) {
            return Disposition.REDELIVER;
        }
        if (outcome instanceof ProcessingOutcome.AlreadyFailed<R> failed) {
            return deadLetter(new DeadLetter<>(record, DeadLetter.Reason.ALREADY_FAILED, Optional.of(failed.key()),
                    failed.error(), Optional.empty()));
        }
        if (outcome instanceof ProcessingOutcome.KeyReused<R> reused) {
            return deadLetter(new DeadLetter<>(record, DeadLetter.Reason.KEY_REUSED, Optional.of(reused.key()),
                    Optional.of("key " + reused.key() + " is held by a record with another payload fingerprint"),
                    Optional.empty()));
        }
        ProcessingOutcome.Failed<R> failed = (ProcessingOutcome.Failed<R>) outcome;
        if (failed.key() == null) {
            return deadLetter(new DeadLetter<>(record, DeadLetter.Reason.NO_KEY, Optional.empty(),
                    Optional.of(String.valueOf(failed.cause().getMessage())), Optional.of(failed.cause())));
        }
        if (failed.keyKept()) {
            return deadLetter(new DeadLetter<>(record, DeadLetter.Reason.FAILED, Optional.of(failed.key()),
                    Optional.of(failed.cause().toString()), Optional.of(failed.cause())));
        }
        return Disposition.REDELIVER;
    }

    private Disposition deadLetter(DeadLetter<K, V> letter) {
        try {
            deadLetters.deadLetter(letter);
            return Disposition.DEAD_LETTERED;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // Not stored: committing past it would lose it, so it comes again and is handed over again.
            log.warn("could not store the dead letter for record {} ({}); it will be redelivered",
                    RecordKeys.where(letter.record()), letter.reason(), e);
            return Disposition.REDELIVER;
        }
    }

    /** Reads the partition again from {@code offset}, after the retry back-off. */
    private void rewind(TopicPartition partition, long offset) {
        if (seekBack(partition, offset, true)) {
            resumeAt.put(partition, System.nanoTime() + retryBackoff.toNanos());
        }
    }

    /** Seeks {@code partition} back to {@code offset}, and pauses it if asked; false when it is no longer held. */
    private boolean seekBack(TopicPartition partition, long offset, boolean pause) {
        try {
            consumer.seek(partition, offset);
            if (pause) {
                consumer.pause(Set.of(partition));
            }
            return true;
        } catch (IllegalStateException revoked) {
            // The group took the partition away while its records ran (the consumer-group protocol revokes on a
            // background thread): nothing past the record was committed, so its new owner reads it again.
            log.debug("partition {} was revoked before it could be sought back to {}", partition, offset);
            return false;
        }
    }

    private void resumeDue() {
        if (resumeAt.isEmpty()) {
            return;
        }
        Set<TopicPartition> assigned = consumer.assignment();
        long now = System.nanoTime();
        for (Iterator<Map.Entry<TopicPartition, Long>> it = resumeAt.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<TopicPartition, Long> entry = it.next();
            if (!assigned.contains(entry.getKey())) {
                it.remove();    // revoked meanwhile; a new assignment is not paused
            } else if (now - entry.getValue() >= 0) {
                consumer.resume(Set.of(entry.getKey()));
                it.remove();
            }
        }
    }

    /** This poll's offsets, after those an earlier commit left for the partitions still assigned. */
    private Map<TopicPartition, OffsetAndMetadata> withUncommitted(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (!commitOffsets || uncommitted.isEmpty()) {
            return offsets;
        }
        // A revoked partition's new owner reads from its last commit, and commits for itself.
        uncommitted.keySet().retainAll(consumer.assignment());
        Map<TopicPartition, OffsetAndMetadata> merged = new LinkedHashMap<>(uncommitted);
        merged.putAll(offsets);
        return merged;
    }

    private Optional<KafkaException> commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (!commitOffsets || offsets.isEmpty()) {
            return Optional.empty();
        }
        // Kept until the commit succeeds: a commit that throws (a timeout, a wakeup) is tried again next time.
        uncommitted.putAll(offsets);
        try {
            consumer.commitSync(offsets);
            uncommitted.clear();
            return Optional.empty();
        } catch (RebalanceInProgressException | RetriableCommitFailedException e) {
            // The member keeps the partitions it is not asked to give back (cooperative rebalancing): the next poll
            // completes the rebalance, and the next commit stores these offsets for the ones it still holds.
            log.info("could not commit {} during a rebalance ({}); committing them with the next poll", offsets,
                    e.getClass().getSimpleName());
            return Optional.of(e);
        } catch (CommitFailedException | UnknownMemberIdException | IllegalGenerationException e) {
            // The member left the group (or the coordinator no longer knows it, after a rebalance it missed): its
            // partitions' new owners read from the last commit and find these records already processed, so
            // nothing is lost or doubled.
            uncommitted.clear();
            log.warn("could not commit {} after processing; the records will come again, as already processed",
                    offsets, e);
            return Optional.of(e);
        }
    }

    /**
     * Settings for a {@link KafkaRecordProcessor}; every setter checks its value at once.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param <R> the handler's result type
     */
    public static final class Builder<K, V, R> {
        private final Consumer<K, V> consumer;
        private final DedupStore store;
        private final ResultCodec<R> codec;
        private RecordKeys<K, V> keys = RecordKeys.header();
        private Duration lease = Duration.ofSeconds(30);
        private Duration retention = Duration.ofDays(1);
        private Predicate<? super Exception> keepKeyOn = failure -> false;
        private Function<? super Exception, String> describeFailure;
        private Function<? super ConsumerRecord<K, V>, byte[]> fingerprint;
        private java.util.function.Consumer<? super ProcessingOutcome<?>> outcomeListener;
        private DeadLetterHandler<K, V> deadLetters;
        private Duration retryBackoff = Duration.ofSeconds(1);
        private boolean commitOffsets = true;
        private int maxAttempts = AttemptLimit.UNLIMITED;
        private boolean settleInBatches;
        private DataSource inboxDataSource;
        private Function<Connection, DedupStore> inboxViews;

        private Builder(Consumer<K, V> consumer, DedupStore store, ResultCodec<R> codec) {
            this.consumer = Objects.requireNonNull(consumer, "consumer");
            this.store = Objects.requireNonNull(store, "store");
            this.codec = Objects.requireNonNull(codec, "codec");
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
         * How long a claim holds before another consumer may take over (default 30 s); heartbeats renew it, also for
         * the records of a batch that wait for the ones before them (and, with {@link #settleInBatches()}, for the
         * records that ran, until the batch's settle).
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
         * Failures that retrying cannot fix: their key is stored as failed, the record goes to the dead letters and
         * its offset is committed past. Every other handler failure rewinds the partition to the record.
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
         * a live key with a different payload goes to the dead letters ({@link DeadLetter.Reason#KEY_REUSED}) instead
         * of being taken for a redelivery; see {@link IdempotentConsumer.Builder#fingerprint}. With a fingerprint,
         * each record is claimed on its own instead of one {@code claimAll} per partition.
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
         * Called with every record's outcome, on the polling thread, after its store calls: for metrics (see
         * dedup-micrometer) or logging. An exception it throws is logged and changes nothing.
         *
         * @param listener takes each outcome
         * @return this builder
         */
        public Builder<K, V, R> onOutcome(java.util.function.Consumer<? super ProcessingOutcome<?>> listener) {
            this.outcomeListener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Where records that can never take effect go (required): a {@link DeadLetterTopic}, or your own handler.
         *
         * @param deadLetters stores a dead letter durably before returning
         * @return this builder
         */
        public Builder<K, V, R> deadLetters(DeadLetterHandler<K, V> deadLetters) {
            this.deadLetters = Objects.requireNonNull(deadLetters, "deadLetters");
            return this;
        }

        /**
         * How long a rewound partition stays paused before its record is tried again (default 1 s), so a key held
         * elsewhere is not claimed in a hot loop.
         *
         * @param backoff the pause, zero for none
         * @return this builder
         */
        public Builder<K, V, R> retryBackoff(Duration backoff) {
            Objects.requireNonNull(backoff, "backoff");
            if (backoff.isNegative()) {
                throw new IllegalArgumentException("backoff must not be negative, but was " + backoff);
            }
            this.retryBackoff = backoff;
            return this;
        }

        /**
         * How many times the handler may fail on one record (default: no limit). The failure of the last attempt is
         * kept as final, as {@link #keepKeyOn} would keep it: the key is stored as failed, the record goes to the
         * dead letters ({@link DeadLetter.Reason#FAILED}) and is committed past. Only a handler that ran and threw an
         * exception counts: a store failure before it ran, a record held elsewhere or an {@link Error} does not. The
         * count is kept in memory by this processor, per partition: a restart, or a rebalance that takes the
         * partition away, starts it again.
         *
         * @param maxAttempts 1 (a failure is final at once) or more
         * @return this builder
         * @throws IllegalArgumentException when {@code maxAttempts} is below 1
         */
        public Builder<K, V, R> maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, but was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Whether the processor commits the offsets itself with {@code commitSync} (default true). With false it
         * only returns them in {@link PollResult#offsets()}, for the caller to commit, for example with
         * {@code producer.sendOffsetsToTransaction} in a consume-transform-produce transaction.
         *
         * @param commit false to leave the commit to the caller
         * @return this builder
         */
        public Builder<K, V, R> commitOffsets(boolean commit) {
            this.commitOffsets = commit;
            return this;
        }

        /**
         * Settles each partition batch's claims with one {@link DedupStore#settleAll} after its handlers ran, instead
         * of one store call per record as they run: a batch costs two store round trips (the {@code claimAll} and
         * the settle) whatever its size, for a wider crash window. Every outcome rule stays (see
         * {@link IdempotentConsumer#processInOrderSettlingOnce}); what changes is a crash (or a lost connection to
         * the store) after a record's effect and before the batch's settle: every record of the batch whose handler
         * ran then runs again once its lease lapses, not only the one in flight. Use it when the handler is
         * idempotent enough to bear that, or its effect is in the database of an {@link #inbox}.
         *
         * @return this builder
         */
        public Builder<K, V, R> settleInBatches() {
            this.settleInBatches = true;
            return this;
        }

        /**
         * The transactional inbox (PostgreSQL): per partition batch, one transaction on a connection from
         * {@code dataSource} holds the batch's claims (on {@code views.apply(connection)}, such as
         * {@code store::inTransaction} of a {@code PostgresDedupStore}), the handler's writes through that connection
         * and the settle; it commits, then the offsets are committed. Exactly once for the database's effects, one
         * commit per batch. Poll with an {@link InboxHandler}. A handler failure rolls the batch back (its keys are
         * freed with it) and the batch runs again one record per transaction, where the failure is retried or kept
         * by the usual rules; a store failure or a transaction the database aborted rolls the batch back and reads
         * it again after the back-off. No heartbeats run: inside the transaction nobody can take a claim over.
         *
         * @param dataSource where each batch's connection comes from (a pool); closed after the batch
         * @param views the store bound to a connection's open transaction
         * @return this builder
         */
        public Builder<K, V, R> inbox(DataSource dataSource, Function<Connection, DedupStore> views) {
            this.inboxDataSource = Objects.requireNonNull(dataSource, "dataSource");
            this.inboxViews = Objects.requireNonNull(views, "views");
            return this;
        }

        /**
         * Builds the processor.
         *
         * @return a processor for the builder's consumer
         * @throws IllegalStateException when no {@link #deadLetters} handler was given
         */
        public KafkaRecordProcessor<K, V, R> build() {
            if (deadLetters == null) {
                throw new IllegalStateException("deadLetters(...) is required: a record that can never take effect"
                        + " (no key, or a failure kept as final) must be stored somewhere before its offset is"
                        + " committed past; use new DeadLetterTopic<>(producer) or your own handler");
            }
            return new KafkaRecordProcessor<>(this);
        }
    }
}
