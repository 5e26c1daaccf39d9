package dev.dedup.kafka.spring;

import dev.dedup.DedupException;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.InboxHandler;
import dev.dedup.kafka.KafkaInbox;
import dev.dedup.kafka.RecordKeys;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.kafka.listener.BatchMessageListener;

/**
 * A Spring Kafka batch listener that runs each poll's records through {@link IdempotentConsumer}, one partition at a
 * time in offset order, and answers with the container's batch semantics. Set it as the listener of a container
 * whose factory has {@code setBatchListener(true)}, or call {@link #onMessage} from a
 * {@code @KafkaListener(batch = "true")} method with the {@code List<ConsumerRecord<K, V>>} it was given, unchanged:
 *
 * <pre>{@code
 * IdempotentBatchListener<String, String, Void> dedup = IdempotentBatchListener
 *         .<String, String, Void>builder(store, ResultCodec.none(), record -> {
 *             reserve(record.value());
 *             return null;
 *         })
 *         .settleInBatches()
 *         .build();
 * }</pre>
 *
 * <p>Three modes, as {@code KafkaRecordProcessor}'s: each record settled as it runs
 * ({@link IdempotentConsumer#processInOrder}, the default); each partition's claims settled with one
 * {@code settleAll} after its handlers ran ({@link Builder#settleInBatches()}); or the transactional inbox on
 * PostgreSQL ({@link #inbox}), one database transaction per partition holding its claims, the handler's writes and
 * the settle, committed before the listener returns.
 *
 * <p>When every record took effect (here or before) it returns, and the container commits the batch. Otherwise it
 * throws a {@link BatchListenerFailedException} for the first record, in the list's order, that must come again or
 * can never take effect; its cause is the exception {@link IdempotentRecordListener} throws for that outcome
 * ({@link KeyInProgressException}, {@link RecordFailedException}, {@link StoreUnavailableException}, or
 * {@link DeadLetterRecordException}). The {@code DefaultErrorHandler} that {@link DedupErrorHandler#create} builds then
 * commits the offsets of the records before it in the list, retries that record after the back-off its cause is
 * classified with (or hands it at once to the recoverer, for a dead letter, and commits past it), and seeks back to
 * the records after it: those that ran here come again as {@code AlreadyProcessed}, and a partition's records after
 * its first that must come again were not run. An {@link Error} from a handler is reported the same way, against
 * its record (what ran before it is settled, the rest released), so that record alone is retried and then
 * recovered.
 *
 * <p>Thread-safe: one listener serves every consumer thread of a concurrent container.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 */
public final class IdempotentBatchListener<K, V, R> implements BatchMessageListener<K, V> {
    private final Walk<K, V, R> walk;

    private IdempotentBatchListener(Builder<K, V, R> builder) {
        IdempotentConsumer<ConsumerRecord<K, V>, R> consumer = builder.consumer();
        if (builder.inboxHandler != null) {
            KafkaInbox<K, V, R> inbox = KafkaInbox.of(builder.dataSource, builder.views, consumer, builder.keys());
            InboxHandler<K, V, R> handler = builder.inboxHandler;
            this.walk = (batch, ran) -> inbox.walk(batch, (record, transaction) -> {
                ran.add(record);
                return handler.handle(record, transaction);
            });
        } else {
            MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler = builder.handler;
            boolean settleOnce = builder.settleInBatches;
            this.walk = (batch, ran) -> {
                MessageHandler<ConsumerRecord<K, V>, R> noted = record -> {
                    ran.add(record);
                    return handler.handle(record);
                };
                return settleOnce ? consumer.processInOrderSettlingOnce(batch, noted)
                        : consumer.processInOrder(batch, noted);
            };
        }
    }

    /** How one partition's records run in the listener's mode, noting each record whose handler ran. */
    @FunctionalInterface
    private interface Walk<K, V, R> {
        List<ProcessingOutcome<R>> run(List<ConsumerRecord<K, V>> partition, Set<ConsumerRecord<K, V>> handlerRan);
    }

    /**
     * Starts a listener that runs {@code handler} for each record once per key, on {@code store}, storing results
     * with {@code codec}; each record is settled as it runs unless {@link Builder#settleInBatches()} is set.
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
        return new Builder<>(store, codec, Objects.requireNonNull(handler, "handler"), null, null, null);
    }

    /**
     * Starts a listener in the transactional inbox mode (PostgreSQL): per partition of a poll, one transaction on a
     * connection from {@code dataSource} holds the claims (on {@code views.apply(connection)}), the handler's writes
     * through that connection and the settle, and commits before the listener returns, so the effects in the
     * database are exactly once. A handler failure rolls the partition's batch back (its keys with it) and runs it
     * again one record per transaction, so the failing record alone is retried or kept; a database failure rolls it
     * back and has its first record retried ({@link StoreUnavailableException} when no handler ran). No heartbeats
     * run: inside the transaction nobody can take a claim over.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param <R> the handler's result type
     * @param store the store whose transaction views {@code views} makes (its settings apply)
     * @param codec how handler results are stored for replay ({@link ResultCodec#none()} for none)
     * @param dataSource where each partition batch's connection comes from (a pool); closed after the batch
     * @param views the store bound to a connection's open transaction, such as
     *     {@code PostgresDedupStore::inTransaction}
     * @param handler the database work for one record, through the transaction's connection
     * @return a builder with the same defaults as {@link #builder}
     */
    public static <K, V, R> Builder<K, V, R> inbox(DedupStore store, ResultCodec<R> codec, DataSource dataSource,
            Function<Connection, DedupStore> views, InboxHandler<K, V, R> handler) {
        return new Builder<>(store, codec, null, Objects.requireNonNull(dataSource, "dataSource"),
                Objects.requireNonNull(views, "views"), Objects.requireNonNull(handler, "handler"));
    }

    /**
     * Processes one poll's records, and returns only when the container may commit them all.
     *
     * @param records the records as the container delivered them, in its order
     * @throws BatchListenerFailedException for the first record, in the list's order, that must come again or can
     *     never take effect; its cause is the exception {@link IdempotentRecordListener#onMessage} throws for it
     */
    @Override
    public void onMessage(List<ConsumerRecord<K, V>> records) {
        Objects.requireNonNull(records, "records");
        Map<ConsumerRecord<K, V>, DedupException> failures = new IdentityHashMap<>();
        Set<ConsumerRecord<K, V>> handlerRan = Collections.newSetFromMap(new IdentityHashMap<>());
        for (List<ConsumerRecord<K, V>> partition : byPartition(records)) {
            List<ProcessingOutcome<R>> outcomes;
            try {
                outcomes = walk.run(partition, handlerRan);
            } catch (VirtualMachineError e) {
                throw e;        // out of memory, a stack overflow: the JVM's, not the record's
            } catch (Error e) {
                throw failedAt(records, failures, culprit(partition, handlerRan), e);
            }
            for (int i = 0; i < outcomes.size(); i++) {
                ConsumerRecord<K, V> record = partition.get(i);
                DedupException failure = ListenerFailures.of(record, outcomes.get(i), handlerRan.contains(record));
                if (failure != null) {
                    failures.put(record, failure);
                }
            }
        }
        // The error handler commits every record before the reported one in the list, so it must be the first.
        for (ConsumerRecord<K, V> record : records) {
            DedupException failure = failures.get(record);
            if (failure != null) {
                throw new BatchListenerFailedException(failure.getMessage(), failure, record);
            }
        }
    }

    /**
     * An {@link Error} out of a handler, the walk having settled what ran and released the rest: reported against
     * the record that threw it, so the error handler retries and recovers that record alone, as a record listener's
     * would, and not the whole batch (whose fallback would send records that never ran to the dead letters). A
     * failure met earlier in the list comes first: the error handler commits every record before the one reported.
     */
    private static <K, V> BatchListenerFailedException failedAt(List<ConsumerRecord<K, V>> records,
            Map<ConsumerRecord<K, V>, DedupException> failures, ConsumerRecord<K, V> culprit, Error error) {
        for (ConsumerRecord<K, V> record : records) {
            if (record == culprit) {
                break;
            }
            DedupException failure = failures.get(record);
            if (failure != null) {
                return new BatchListenerFailedException(failure.getMessage(), failure, record);
            }
        }
        return new BatchListenerFailedException("the handler of " + RecordKeys.where(culprit) + " threw " + error,
                error, culprit);
    }

    /** The record whose handler threw: the last of the partition whose handler ran, or its first when none did. */
    private static <K, V> ConsumerRecord<K, V> culprit(List<ConsumerRecord<K, V>> partition,
            Set<ConsumerRecord<K, V>> handlerRan) {
        ConsumerRecord<K, V> last = partition.get(0);
        for (ConsumerRecord<K, V> record : partition) {
            if (handlerRan.contains(record)) {
                last = record;
            }
        }
        return last;
    }

    /** The records of each partition, in the list's order, partitions in the order they first appear. */
    private static <K, V> List<List<ConsumerRecord<K, V>>> byPartition(List<ConsumerRecord<K, V>> records) {
        Map<TopicPartition, List<ConsumerRecord<K, V>>> partitions = new LinkedHashMap<>();
        for (ConsumerRecord<K, V> record : records) {
            partitions.computeIfAbsent(new TopicPartition(record.topic(), record.partition()),
                    partition -> new ArrayList<>()).add(record);
        }
        return new ArrayList<>(partitions.values());
    }

    /**
     * Settings for an {@link IdempotentBatchListener}; every setter checks its value at once.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param <R> the handler's result type
     */
    public static final class Builder<K, V, R> extends ListenerSettings<K, V, R, Builder<K, V, R>> {
        private final MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler;
        private final DataSource dataSource;
        private final Function<Connection, DedupStore> views;
        private final InboxHandler<K, V, R> inboxHandler;
        private boolean settleInBatches;

        private Builder(DedupStore store, ResultCodec<R> codec,
                MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler, DataSource dataSource,
                Function<Connection, DedupStore> views, InboxHandler<K, V, R> inboxHandler) {
            super(store, codec);
            this.handler = handler;
            this.dataSource = dataSource;
            this.views = views;
            this.inboxHandler = inboxHandler;
        }

        /**
         * Settles each partition's claims with one {@link DedupStore#settleAll} after its handlers ran, instead of
         * one store call per record as they run: two store round trips per partition batch whatever its size, for
         * a wider crash window (see {@link IdempotentConsumer#processInOrderSettlingOnce}): a crash after a
         * record's effect and before the settle has every record of the batch that ran run again once its lease
         * lapses.
         *
         * @return this builder
         * @throws IllegalStateException for an {@link IdempotentBatchListener#inbox} listener, which settles in its
         *     transaction
         */
        public Builder<K, V, R> settleInBatches() {
            if (inboxHandler != null) {
                throw new IllegalStateException("an inbox listener settles each batch in its transaction already");
            }
            this.settleInBatches = true;
            return this;
        }

        /**
         * Builds the listener.
         *
         * @return a listener for the builder's store, mode and handler
         */
        public IdempotentBatchListener<K, V, R> build() {
            return new IdempotentBatchListener<>(this);
        }
    }
}
