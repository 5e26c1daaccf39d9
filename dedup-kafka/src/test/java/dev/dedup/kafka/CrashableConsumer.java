package dev.dedup.kafka;

import dev.dedup.DedupStore;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;

/**
 * One simulated consumer process on its own thread: its own KafkaConsumer, database connection and store handle. A
 * crash (the driver's {@link #crash()}, or a planned halt at a chosen point) kills its store handle, so nothing more
 * reaches the store, and closes the consumer without committing: its claims stay until their lease lapses and its
 * records go to another member of the group, as after a killed process.
 *
 * <p>The effect of a record is one transaction: a row in the effect log and an increment of the record's counter.
 * With a store, records go through {@link KafkaRecordProcessor}; without one (the naive control), the effect runs
 * for every delivery. As a transactional inbox ({@link #inbox}), the claims share the effects' transaction.
 */
final class CrashableConsumer implements Runnable {
    /** Where a consumer halted. */
    enum Point {
        /** Between polls, nothing in flight. */
        IDLE,
        /** In the handler, before the effect. */
        BEFORE_EFFECT,
        /** In the handler, after the effect and before its completion reaches the store. */
        AFTER_EFFECT,
        /** After the poll's records were completed, before their offsets were committed. */
        AFTER_COMPLETION
    }

    /** Decides whether to halt at a point, given how many records this consumer has handled so far. */
    @FunctionalInterface
    interface HaltPlan {
        boolean haltAt(Point point, int handled);
    }

    /** Counters shared by every consumer of a run. */
    static final class Figures {
        final Map<Point, AtomicInteger> halts = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        final LongAdder deliveries = new LongAdder();
        final LongAdder refusedCompletions = new LongAdder();
        /** Completions the store failed or refused (an outage, a lapsed lease): effects without completion too. */
        final LongAdder unstoredCompletions = new LongAdder();
        /** Polls whose inbox transaction was rolled back, with every record of the poll read again. */
        final LongAdder rolledBack = new LongAdder();
        /** Consumers that ended because their database connection broke or could not be made. */
        final LongAdder databaseLosses = new LongAdder();
        /** When the store's server came back from an outage (System.nanoTime), 0 before. */
        volatile long storeBackAt;
        /** The first record completed after {@link #storeBackAt} (System.nanoTime), 0 before. */
        final AtomicLong firstCompletedAfterOutage = new AtomicLong();
        final LongAdder deadLetters = new LongAdder();
        /** What a consumer threw that was not a planned halt: a test failure. */
        final List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();

        int halts(Point point) {
            AtomicInteger count = halts.get(point);
            return count == null ? 0 : count.get();
        }

        int outcomes(String type) {
            AtomicInteger count = outcomes.get(type);
            return count == null ? 0 : count.get();
        }

        /** Crashes that left an effect without its completion: halts after the effect, and completions refused. */
        long betweenEffectAndCompletion() {
            return halts(Point.AFTER_EFFECT) + refusedCompletions.sum() + unstoredCompletions.sum();
        }
    }

    /** Thrown on the consumer's thread to halt it where it stands. */
    static final class Halt extends Error {
        private static final long serialVersionUID = 1L;

        Halt(Point point) {
            super("halted " + point, null, false, false);
        }
    }

    private final String name;
    private final String group;
    private final String topic;
    private final int maxPollRecords;
    private WatchedStore store;
    /** In the transactional inbox mode, the store whose views share the consumer's transactions; else null. */
    private PostgresDedupStore inbox;
    /** The inbox's view on the current transaction of the consumer's connection. */
    private volatile DedupStore transactionView;
    private final String table;
    private final HaltPlan plan;
    private final Figures figures;
    private final Thread thread;
    private long effectPauseMillis;
    private volatile boolean crashed;
    private volatile boolean stopping;
    private int handled;

    /**
     * @param store the shared store, or null for the naive control
     * @param table the prefix of the run's effect tables
     */
    CrashableConsumer(String name, String group, String topic, int maxPollRecords, DedupStore store, String table,
            HaltPlan plan, Figures figures) {
        this.name = name;
        this.group = group;
        this.topic = topic;
        this.maxPollRecords = maxPollRecords;
        this.store = store == null ? null : new WatchedStore(store);
        this.table = table;
        this.plan = plan;
        this.figures = figures;
        this.thread = new Thread(this, name);
    }

    static void createTables(Connection db, String table) throws SQLException {
        try (var statement = db.createStatement()) {
            statement.execute("CREATE TABLE " + table + "_applied (id text PRIMARY KEY, applied int NOT NULL)");
            statement.execute("CREATE TABLE " + table + "_log (id text NOT NULL, consumer text NOT NULL,"
                    + " at timestamptz NOT NULL DEFAULT now())");
        }
    }

    static void dropTables(Connection db, String table) throws SQLException {
        try (var statement = db.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + table + "_applied, " + table + "_log");
        }
    }

    /** A slow downstream: each effect first waits this long, so crashes land inside batches too. */
    CrashableConsumer effectPause(long millis) {
        this.effectPauseMillis = millis;
        return this;
    }

    /**
     * The transactional inbox: each poll is one transaction on the consumer's connection, holding the claims, the
     * effects and the completions; it commits before the offsets, and any failure rolls it all back.
     */
    CrashableConsumer inbox(PostgresDedupStore postgres) {
        this.inbox = postgres;
        this.store = new WatchedStore(() -> transactionView);
        return this;
    }

    CrashableConsumer start() {
        thread.start();
        return this;
    }

    /** Kills the consumer at its next step, like a SIGKILL: no completion, no commit from then on. */
    void crash() {
        crashed = true;
    }

    /** Finishes the current poll, commits it, and closes. */
    void stop() {
        stopping = true;
    }

    void join() throws InterruptedException {
        thread.join(30_000);
        if (thread.isAlive()) {
            throw new AssertionError(name + " did not end within 30 s");
        }
    }

    boolean isAlive() {
        return thread.isAlive();
    }

    @Override
    public void run() {
        try (Connection db = KafkaTestSupport.postgres();
                KafkaConsumer<String, String> consumer = KafkaTestSupport.consumer(group, maxPollRecords)) {
            consumer.subscribe(List.of(topic));
            if (inbox != null) {
                db.setAutoCommit(false);    // the inbox's transactions, one per poll
                transactionView = inbox.inTransaction(db);
            }
            KafkaRecordProcessor<String, String, Void> processor = store == null ? null
                    : KafkaRecordProcessor.builder(consumer, (DedupStore) store, ResultCodec.none())
                            .lease(Duration.ofSeconds(2))
                            .retryBackoff(Duration.ofMillis(200))
                            .commitOffsets(false)
                            .deadLetters(letter -> figures.deadLetters.increment())
                            .build();
            while (!stopping) {
                checkpoint(Point.IDLE);
                Map<TopicPartition, OffsetAndMetadata> offsets = processor == null ? naivePoll(consumer, db)
                        : inbox == null ? dedupPoll(processor, db) : inboxPoll(processor, consumer, db);
                if (offsets.isEmpty()) {
                    continue;
                }
                checkpoint(Point.AFTER_COMPLETION);
                try {
                    consumer.commitSync(offsets);
                } catch (CommitFailedException | RebalanceInProgressException e) {
                    // The partitions moved on: their new owner reads them again from the last commit.
                }
            }
        } catch (Halt halted) {
            // Closed above without a commit: what this consumer did not commit goes to the next owner.
        } catch (SQLException | RuntimeException | Error e) {
            if (databaseGone(e)) {
                // Its connection broke (or could not be made) in an outage: the process ends, uncommitted, like a
                // crash, and the driver starts a new one. Counted, so that a run without an outage can refuse it.
                figures.databaseLosses.increment();
            } else {
                figures.errors.add(e);
            }
        } finally {
            if (store != null) {
                figures.refusedCompletions.add(store.refusedCompletions());
                if (inbox == null) {
                    // In the inbox an unstored completion rolls its effect back with it: no double.
                    figures.unstoredCompletions.add(store.unstoredCompletions());
                }
            }
        }
    }

    private Map<TopicPartition, OffsetAndMetadata> dedupPoll(KafkaRecordProcessor<String, String, Void> processor,
            Connection db) {
        PollResult<String, String, Void> result = processor.poll(Duration.ofMillis(200), record -> {
            apply(db, record);
            return null;
        });
        count(result);
        return result.offsets();
    }

    private void count(PollResult<String, String, Void> result) {
        for (RecordOutcome<String, String, Void> outcome : result.outcomes()) {
            figures.outcomes.computeIfAbsent(outcome.outcome().getClass().getSimpleName(),
                    type -> new AtomicInteger()).incrementAndGet();
            if (outcome.outcome() instanceof ProcessingOutcome.Processed && figures.storeBackAt != 0) {
                figures.firstCompletedAfterOutage.compareAndSet(0, System.nanoTime());
            }
        }
    }

    /**
     * One poll in one transaction. Commits it when every claimed record completed; otherwise (a store failure, a
     * completion refused, a deadlock between two inboxes) rolls it back, effects included, and reads every
     * partition of the poll again from its first record, since nothing of the poll was kept.
     */
    private Map<TopicPartition, OffsetAndMetadata> inboxPoll(KafkaRecordProcessor<String, String, Void> processor,
            KafkaConsumer<String, String> consumer, Connection db) throws SQLException {
        PollResult<String, String, Void> result = processor.poll(Duration.ofMillis(200), record -> {
            apply(db, record);
            return null;
        });
        boolean intact = result.outcomes().stream().noneMatch(outcome -> outcome.outcome()
                instanceof ProcessingOutcome.Failed || outcome.outcome() instanceof ProcessingOutcome.LeaseLost);
        if (intact) {
            db.commit();
            transactionView = inbox.inTransaction(db);  // a view is for one transaction
            count(result);
            return result.offsets();
        }
        db.rollback();
        figures.rolledBack.increment();
        transactionView = inbox.inTransaction(db);
        Map<TopicPartition, Long> first = new HashMap<>();
        for (RecordOutcome<String, String, Void> outcome : result.outcomes()) {
            ConsumerRecord<String, String> record = outcome.record();
            first.merge(new TopicPartition(record.topic(), record.partition()), record.offset(), Math::min);
        }
        first.forEach(consumer::seek);
        return Map.of();
    }

    private Map<TopicPartition, OffsetAndMetadata> naivePoll(KafkaConsumer<String, String> consumer, Connection db)
            throws SQLException {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<String, String> record : records) {
            apply(db, record);
            offsets.put(new TopicPartition(record.topic(), record.partition()),
                    new OffsetAndMetadata(record.offset() + 1));
        }
        return offsets;
    }

    /** The handler: the effect, with a halt point on each side of it. */
    private void apply(Connection db, ConsumerRecord<String, String> record) {
        figures.deliveries.increment();
        checkpoint(Point.BEFORE_EFFECT);
        String id = record.value();
        try {
            Thread.sleep(effectPauseMillis);
            boolean ownTransaction = inbox == null;     // the inbox commits the whole poll, claims included
            db.setAutoCommit(false);
            try (PreparedStatement log = db.prepareStatement("INSERT INTO " + table + "_log (id, consumer)"
                    + " VALUES (?, ?)");
                    PreparedStatement count = db.prepareStatement("INSERT INTO " + table + "_applied (id, applied)"
                            + " VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET applied = " + table
                            + "_applied.applied + 1")) {
                log.setString(1, id);
                log.setString(2, name);
                log.executeUpdate();
                count.setString(1, id);
                count.executeUpdate();
            }
            if (ownTransaction) {
                db.commit();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(name + ": the effect failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(name + ": interrupted before the effect", e);
        }
        handled++;
        checkpoint(Point.AFTER_EFFECT);
    }

    /** A connection failure (SQLSTATE class 08) or a server shutdown (57P), here or as a cause. */
    private static boolean databaseGone(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().startsWith("08") || sql.getSQLState().startsWith("57P"))) {
                return true;
            }
        }
        return false;
    }

    private void checkpoint(Point point) {
        if (crashed || plan.haltAt(point, handled)) {
            if (store != null) {
                store.kill();
            }
            figures.halts.computeIfAbsent(point, p -> new AtomicInteger()).incrementAndGet();
            throw new Halt(point);
        }
    }
}
