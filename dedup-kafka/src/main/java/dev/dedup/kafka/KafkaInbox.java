package dev.dedup.kafka;

import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The transactional inbox of one partition batch, as the inbox modes of {@link KafkaRecordProcessor} and of
 * {@code dev.dedup.kafka.spring.IdempotentBatchListener} run it: one database transaction holds the batch's claims,
 * the handler's writes and the settle, and commits before the offsets. A handler failure rolls the whole batch back
 * (its keys with it) and the batch runs again one record per transaction, so the failure is retried or kept for its
 * record alone and the records before it commit. Applications use those two entry points, not this class. Holds no
 * state between batches, so one serves several consumer threads.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 */
public final class KafkaInbox<K, V, R> {
    private final DataSource dataSource;
    private final Function<Connection, DedupStore> views;
    private final IdempotentConsumer<ConsumerRecord<K, V>, R> idempotent;
    private final RecordKeys<K, V> keys;
    private final AttemptLimit<K, V> attempts;

    KafkaInbox(DataSource dataSource, Function<Connection, DedupStore> views,
            IdempotentConsumer<ConsumerRecord<K, V>, R> idempotent, RecordKeys<K, V> keys,
            AttemptLimit<K, V> attempts) {
        this.dataSource = dataSource;
        this.views = views;
        this.idempotent = idempotent;
        this.keys = keys;
        this.attempts = attempts;
    }

    /**
     * An inbox without an attempt limit: each handler failure is retried or kept as {@code idempotent}'s
     * {@code keepKeyOn} says, and the caller's retries (such as a container's error handler) bound them.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param <R> the handler's result type
     * @param dataSource where each batch's connection comes from (a pool); closed after the batch
     * @param views the store bound to a connection's open transaction, such as {@code store::inTransaction} of a
     *     {@code PostgresDedupStore}
     * @param idempotent the settings each transaction's consumer is made from
     *     ({@link IdempotentConsumer#inTransaction})
     * @param keys the key of a record, as {@code idempotent} finds it
     * @return the inbox
     */
    public static <K, V, R> KafkaInbox<K, V, R> of(DataSource dataSource, Function<Connection, DedupStore> views,
            IdempotentConsumer<ConsumerRecord<K, V>, R> idempotent, RecordKeys<K, V> keys) {
        return new KafkaInbox<>(Objects.requireNonNull(dataSource, "dataSource"), Objects.requireNonNull(views,
                "views"), Objects.requireNonNull(idempotent, "idempotent"), Objects.requireNonNull(keys, "keys"),
                new AttemptLimit<>(AttemptLimit.UNLIMITED));
    }

    /**
     * Runs one partition batch; its outcomes are committed in the database when this returns.
     *
     * @param batch one partition's records, in offset order
     * @param handler the database work for one record, through the transaction's connection
     * @return one outcome per record walked, in order, as {@link IdempotentConsumer#processInOrder} returns them:
     *     fewer than the records when the walk stopped at one that must come again
     */
    public List<ProcessingOutcome<R>> walk(List<ConsumerRecord<K, V>> batch, InboxHandler<K, V, R> handler) {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try {
                return walk(connection, batch, handler);
            } catch (Throwable e) {
                rollbackQuietly(connection, e);
                throw e;
            }
        } catch (SQLException | RuntimeException e) {
            return rolledBack(batch, e);
        }
    }

    private List<ProcessingOutcome<R>> walk(Connection connection, List<ConsumerRecord<K, V>> batch,
            InboxHandler<K, V, R> handler) throws SQLException {
        Watched watched = new Watched(handler, connection);
        List<ProcessingOutcome<R>> outcomes = inTransaction(connection).processInOrderSettlingOnce(batch, watched);
        if (watched.threw) {
            connection.rollback();
            return oneByOne(connection, batch, handler);
        }
        Exception failure = storeFailure(outcomes, connection);
        if (failure != null) {
            connection.rollback();
            return rolledBack(batch, failure);
        }
        connection.commit();
        return outcomes;
    }

    /**
     * After a handler failure: each record in a transaction of its own, in order, up to the first that must come
     * again. A failing record's transaction is rolled back (its writes and its claim); a failure kept as final is
     * then stored alone, in one more transaction, without the writes.
     */
    private List<ProcessingOutcome<R>> oneByOne(Connection connection, List<ConsumerRecord<K, V>> batch,
            InboxHandler<K, V, R> handler) throws SQLException {
        List<ProcessingOutcome<R>> outcomes = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            Watched watched = new Watched(handler, connection);
            ProcessingOutcome<R> outcome = inTransaction(connection)
                    .processInOrderSettlingOnce(List.of(batch.get(i)), attempts.counting(watched)).get(0);
            if (watched.threw) {
                connection.rollback();
                outcome = keepFailure(connection, batch.get(i), outcome, watched.failure);
            } else {
                Exception failure = storeFailure(List.of(outcome), connection);
                if (failure != null) {
                    connection.rollback();
                    outcomes.addAll(rolledBack(batch.subList(i, batch.size()), failure));
                    return outcomes;
                }
                connection.commit();
            }
            outcomes.add(outcome);
            if (mustComeAgain(outcome)) {
                break;
            }
        }
        return outcomes;
    }

    /**
     * A record whose handler threw, its transaction rolled back: retried (key released with the rollback), or, when
     * the failure was kept, the key claimed and failed again in a transaction without the handler's writes.
     */
    private ProcessingOutcome<R> keepFailure(Connection connection, ConsumerRecord<K, V> record,
            ProcessingOutcome<R> outcome, Exception failure) throws SQLException {
        if (!(outcome instanceof ProcessingOutcome.Failed<R> failed) || !failed.keyKept()) {
            return new ProcessingOutcome.Failed<>(outcome.key(), failure, false);
        }
        // The same failure once more, without running the handler: the consumer keeps it as it did (the attempt
        // limit's verdict on this record still stands).
        ProcessingOutcome<R> kept = inTransaction(connection).processInOrderSettlingOnce(List.of(record), again -> {
            throw failure;
        }).get(0);
        if (kept instanceof ProcessingOutcome.Failed<R> notKept && !notKept.keyKept() || aborted(connection) != null) {
            connection.rollback();
            return new ProcessingOutcome.Failed<>(outcome.key(), failure, false);
        }
        connection.commit();
        return kept;
    }

    private IdempotentConsumer<ConsumerRecord<K, V>, R> inTransaction(Connection connection) {
        return idempotent.inTransaction(Objects.requireNonNull(views.apply(connection), "the transaction's view"));
    }

    /**
     * A store call that failed in the transaction (a claim, a settle), or a transaction the database aborted (a
     * statement failed, perhaps one the handler caught): committing it would silently roll it back, and the offsets
     * would pass records whose effects are gone.
     */
    private static Exception storeFailure(List<? extends ProcessingOutcome<?>> outcomes, Connection connection) {
        for (ProcessingOutcome<?> outcome : outcomes) {
            if (outcome instanceof ProcessingOutcome.LeaseLost<?> lost) {
                return lost.storeFailure().orElseGet(() -> new IllegalStateException("the transaction's view did"
                        + " not settle key " + lost.key() + ": not this transaction's claim"));
            }
            if (outcome instanceof ProcessingOutcome.Failed<?> failed && failed.key() != null) {
                return failed.cause() instanceof Exception e ? e : new IllegalStateException(failed.cause());
            }
        }
        return aborted(connection);
    }

    /** The failure of a statement sent on the transaction, when the database has aborted it; else null. */
    private static SQLException aborted(Connection connection) {
        try (Statement probe = connection.createStatement()) {
            probe.execute("SELECT 1");
            return null;
        } catch (SQLException e) {
            return e;
        }
    }

    /**
     * The outcomes of a batch whose transaction was rolled back (or never began): the records without a key before
     * the first keyed one stand (no store was involved, they go to the dead letters); that first keyed record must
     * come again, and the walk stops there.
     */
    private List<ProcessingOutcome<R>> rolledBack(List<ConsumerRecord<K, V>> batch, Exception cause) {
        List<ProcessingOutcome<R>> outcomes = new ArrayList<>();
        for (ConsumerRecord<K, V> record : batch) {
            try {
                outcomes.add(new ProcessingOutcome.Failed<>(DedupLimits.checkKey(keys.keyOf(record)), cause, false));
                break;
            } catch (RuntimeException noKey) {
                outcomes.add(new ProcessingOutcome.Failed<>(null, noKey, false));
            }
        }
        return outcomes;
    }

    private static boolean mustComeAgain(ProcessingOutcome<?> outcome) {
        return outcome instanceof ProcessingOutcome.InProgressElsewhere
                || outcome instanceof ProcessingOutcome.Failed<?> failed && failed.key() != null && !failed.keyKept();
    }

    private static void rollbackQuietly(Connection connection, Throwable failure) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /** The user's handler on the transaction's connection, noting whether it threw. */
    private final class Watched implements MessageHandler<ConsumerRecord<K, V>, R> {
        private final InboxHandler<K, V, R> handler;
        private final Connection connection;
        private boolean threw;
        private Exception failure;

        Watched(InboxHandler<K, V, R> handler, Connection connection) {
            this.handler = handler;
            this.connection = connection;
        }

        @Override
        public R handle(ConsumerRecord<K, V> record) throws Exception {
            try {
                return handler.handle(record, connection);
            } catch (Exception e) {
                threw = true;
                failure = e;
                throw e;
            }
        }
    }
}
