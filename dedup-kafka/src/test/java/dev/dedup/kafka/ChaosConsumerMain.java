package dev.dedup.kafka;

import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.store.postgres.PostgresDedupStore;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;

/**
 * One consumer process of {@link ChaosOnKafkaTest}: its own JVM, KafkaConsumer, database connection and store. The
 * driver kills it with SIGKILL; it also halts itself ({@link Runtime#halt}) at chosen points, after counting the
 * halt on its {@link ChaosBoard}. The board's phase says where it stood when killed.
 *
 * <p>The effect of a record is one transaction: a row in the effect log and an increment of the record's counter.
 * With a store, records go through {@link KafkaRecordProcessor}; the naive control runs the effect for every
 * delivery; REDIS_BATCH settles each partition batch at once ({@link KafkaRecordProcessor.Builder#settleInBatches});
 * POSTGRES_INBOX is the processor's inbox mode ({@link KafkaRecordProcessor.Builder#inbox}): each partition batch's
 * claims, effects and settle are one transaction.
 *
 * <p>Arguments: the board's file, then {@code key=value}: mode (POSTGRES_INBOX, POSTGRES, REDIS, REDIS_BATCH, NAIVE),
 * topic, group, table, namespace, redis (host:port), seed, halt (chance per record of a halt before and after its effect),
 * haltAfterCompletion (chance per poll of a halt before its commit), and optionally haltBeforeDelivery (a halt
 * before the effect of this process's n-th delivery, counting from 1) and leaseMillis (default 1000: a killed
 * consumer's claims hold its records back for a second).
 */
public final class ChaosConsumerMain {
    /** The board's slots. */
    enum Slot {
        PHASE, DELIVERIES, HALT_BEFORE_EFFECT, HALT_AFTER_EFFECT, HALT_AFTER_COMPLETION, PROCESSED,
        ALREADY_PROCESSED, IN_PROGRESS_ELSEWHERE, FAILED, LEASE_LOST, ALREADY_FAILED, ROLLED_BACK, DEAD_LETTERS,
        /** Times the effects' connection broke and was made again. */
        RECONNECTS,
        /** Waits for a server (PostgreSQL, the store) that was unavailable when the process started. */
        WAITS_AT_START,
        /** Deaths from the Kafka client's own race (see {@link #clientRace}), which end the process like a crash. */
        CLIENT_RACES,
        /** Effects applied and not settled yet: the records a death now would run again (REDIS_BATCH: a batch's). */
        UNSETTLED,
        /** The sum of {@link #UNSETTLED} at each self-halt. */
        UNSETTLED_AT_HALT,
        ERRORS;

        static final int COUNT = values().length;
    }

    /** The phase slot's values. */
    static final long IDLE = 0;
    /** In the handler, before the effect's commit was sent. */
    static final long HANDLING = 1;
    /** From the effect's commit until its completion is stored (or, in the inbox, until the poll's commit). */
    static final long EFFECT_TO_COMPLETION = 2;
    /** The poll's records are settled; their offsets are not committed yet. */
    static final long COMPLETED = 3;

    private final ChaosBoard board;
    private final Map<String, String> settings;
    private final Random random;
    private final String table;
    private final double halt;
    private final double haltAfterCompletion;
    private final long haltBeforeDelivery;
    private final String name;
    /** The effects' connection outside the inbox; replaced after it broke. */
    private Connection db;
    private volatile boolean dbBroken;

    private ChaosConsumerMain(ChaosBoard board, Map<String, String> settings) {
        this.board = board;
        this.settings = settings;
        this.random = new Random(Long.parseLong(settings.get("seed")));
        this.table = settings.get("table");
        this.halt = Double.parseDouble(settings.get("halt"));
        this.haltAfterCompletion = Double.parseDouble(settings.get("haltAfterCompletion"));
        this.haltBeforeDelivery = Long.parseLong(settings.getOrDefault("haltBeforeDelivery", "0"));
        this.name = "pid-" + ProcessHandle.current().pid();
    }

    public static void main(String[] args) {
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), Slot.COUNT);
        Map<String, String> settings = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] pair = args[i].split("=", 2);
            settings.put(pair[0], pair[1]);
        }
        try {
            new ChaosConsumerMain(board, settings).run();
        } catch (Throwable e) {
            if (clientRace(e)) {
                board.add(Slot.CLIENT_RACES.ordinal(), 1);
                Runtime.getRuntime().halt(4);
            }
            board.add(Slot.ERRORS.ordinal(), 1);
            ConsumerProcess.printError(e);
            Runtime.getRuntime().halt(1);
        }
        Runtime.getRuntime().halt(0);
    }

    /**
     * The consumer-group protocol's client (kafka-clients 4.1) can throw this from {@code poll} when the background
     * thread revokes a partition while the fetch is collected (the same family as KAFKA-16227): the process dies of
     * it like a crash, which the system must survive anyway, and the driver restarts it.
     */
    private static boolean clientRace(Throwable e) {
        return e instanceof IllegalStateException && String.valueOf(e.getMessage())
                .startsWith("No current assignment for partition");
    }

    private void run() throws Exception {
        String mode = settings.get("mode");
        try (KafkaConsumer<String, String> consumer = KafkaTestSupport.consumer(settings.get("group"), 100)) {
            // In the group first, then the servers: a consumer started in an outage is ready when the server returns.
            consumer.subscribe(List.of(settings.get("topic")));
            // A service waits for its servers at start-up, as a connection pool would, instead of dying in a loop.
            db = untilAvailable(this::connect);
            try (DedupStore store = untilAvailable(() -> openStore(mode))) {
                consume(consumer, store, mode);
            }
        }
    }

    private void consume(KafkaConsumer<String, String> consumer, DedupStore store, String mode) throws Exception {
        if (store == null) {
            naive(consumer);
        } else if (mode.equals("POSTGRES_INBOX")) {
            inbox(consumer, (PostgresDedupStore) store);
        } else {
            dedup(consumer, store);
        }
    }

    private Connection connect() throws SQLException {
        Connection connection = KafkaTestSupport.postgres();
        connection.setAutoCommit(false);
        return connection;
    }

    /** Calls {@code open} until the server it needs answers (at most a minute), waiting 100 ms between tries. */
    private <T> T untilAvailable(Callable<T> open) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        for (boolean counted = false; ; ) {
            try {
                return open.call();
            } catch (Exception e) {
                if (!serverGone(e) || System.nanoTime() > deadline) {
                    throw e;
                }
                if (!counted) {
                    board.add(Slot.WAITS_AT_START.ordinal(), 1);
                    counted = true;
                }
                Thread.sleep(100);
            }
        }
    }

    /** After the effects' connection broke: a new one, once the server answers again. */
    private void reconnect() throws Exception {
        try {
            db.close();
        } catch (SQLException e) {
            // Already broken.
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (true) {
            try {
                db = connect();
                board.add(Slot.RECONNECTS.ordinal(), 1);
                dbBroken = false;
                return;
            } catch (SQLException e) {
                if (!serverGone(e) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    private DedupStore openStore(String mode) {
        String namespace = settings.get("namespace");
        return switch (mode) {
            case "NAIVE" -> null;
            case "POSTGRES", "POSTGRES_INBOX" -> KafkaTestSupport.postgresStore(namespace);
            case "REDIS", "REDIS_BATCH" -> {
                String[] redis = settings.get("redis").split(":");
                yield KafkaTestSupport.redisStore(redis[0], Integer.parseInt(redis[1]), namespace);
            }
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        };
    }

    private KafkaRecordProcessor.Builder<String, String, Void> processor(KafkaConsumer<String, String> consumer,
            DedupStore store) {
        KafkaRecordProcessor.Builder<String, String, Void> builder = KafkaRecordProcessor
                .builder(consumer, store, ResultCodec.none())
                .lease(Duration.ofMillis(Long.parseLong(settings.getOrDefault("leaseMillis", "1000"))))
                .retryBackoff(Duration.ofMillis(200))
                .commitOffsets(false)
                .deadLetters(letter -> board.add(Slot.DEAD_LETTERS.ordinal(), 1))
                .onOutcome(this::count);
        return settings.get("mode").equals("REDIS_BATCH") ? builder.settleInBatches() : builder;
    }

    /** A store outside the effect's transaction: each effect commits on its own, then its completion is stored. */
    private void dedup(KafkaConsumer<String, String> consumer, DedupStore store) throws Exception {
        KafkaRecordProcessor<String, String, Void> processor = processor(consumer, store).build();
        while (true) {
            if (dbBroken) {
                reconnect();
            }
            PollResult<String, String, Void> result = processor.poll(Duration.ofMillis(200), record -> {
                apply(record, db, true);
                return null;
            });
            commit(consumer, result.offsets());
        }
    }

    /**
     * The processor's inbox mode: each partition batch is one transaction on a pooled connection, holding the
     * claims, the effects and the settle; it commits before the offsets. A batch rolled back (a failure, PostgreSQL
     * gone) is read again after the back-off; its records are counted as {@link Slot#ROLLED_BACK}.
     */
    private void inbox(KafkaConsumer<String, String> consumer, PostgresDedupStore store) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(KafkaTestSupport.postgresJdbcUrl());
        config.setMaximumPoolSize(1);
        config.setConnectionTimeout(1_000);     // in an outage, back to the poll loop within a second
        config.setInitializationFailTimeout(-1);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            KafkaRecordProcessor<String, String, Void> processor = processor(consumer, store)
                    .inbox(pool, store::inTransaction).build();
            while (true) {
                PollResult<String, String, Void> result = processor.poll(Duration.ofMillis(200),
                        (record, transaction) -> {
                            apply(record, transaction, false);
                            return null;
                        });
                board.add(Slot.ROLLED_BACK.ordinal(), result.count(ProcessingOutcome.Failed.class));
                commit(consumer, result.offsets());
                board.set(ChaosBoard.PHASE, IDLE);
            }
        }
    }

    /** The control: the effect for every delivery, then the commit. */
    private void naive(KafkaConsumer<String, String> consumer) throws Exception {
        while (true) {
            if (dbBroken) {
                reconnect();
            }
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (ConsumerRecord<String, String> record : records) {
                apply(record, db, true);
                offsets.put(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1));
            }
            commit(consumer, offsets);
        }
    }

    private void commit(KafkaConsumer<String, String> consumer, Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (offsets.isEmpty()) {
            return;
        }
        board.set(ChaosBoard.PHASE, COMPLETED);
        haltMaybe(haltAfterCompletion, Slot.HALT_AFTER_COMPLETION);
        try {
            consumer.commitSync(offsets);
        } catch (CommitFailedException | RebalanceInProgressException e) {
            // The partitions moved on: their new owner reads them again from the last commit.
        }
        board.set(ChaosBoard.PHASE, IDLE);
    }

    /** The handler: the effect on {@code db}, with a halt point on each side of it. */
    private void apply(ConsumerRecord<String, String> record, Connection db, boolean commit) {
        board.set(ChaosBoard.PHASE, HANDLING);
        board.add(Slot.DELIVERIES.ordinal(), 1);
        haltMaybe(board.get(Slot.DELIVERIES.ordinal()) == haltBeforeDelivery ? 1 : halt, Slot.HALT_BEFORE_EFFECT);
        String id = record.value();
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
            // From here the effect may have happened: a death before the completion is stored may double it.
            board.set(ChaosBoard.PHASE, EFFECT_TO_COMPLETION);
            if (commit) {
                // Counted before the commit: a death between the two must not hide an effect that may be in.
                board.add(Slot.UNSETTLED.ordinal(), 1);
                db.commit();
            }
        } catch (SQLException e) {
            dbBroken |= serverGone(e);
            throw new IllegalStateException(name + ": the effect failed", e);
        }
        haltMaybe(halt, Slot.HALT_AFTER_EFFECT);
    }

    /** After each record's store calls: its outcome counted, the window between effect and completion closed. */
    private void count(ProcessingOutcome<?> outcome) {
        Slot slot = outcome instanceof ProcessingOutcome.Processed ? Slot.PROCESSED
                : outcome instanceof ProcessingOutcome.AlreadyProcessed ? Slot.ALREADY_PROCESSED
                : outcome instanceof ProcessingOutcome.InProgressElsewhere ? Slot.IN_PROGRESS_ELSEWHERE
                : outcome instanceof ProcessingOutcome.Failed ? Slot.FAILED
                : outcome instanceof ProcessingOutcome.LeaseLost ? Slot.LEASE_LOST
                : Slot.ALREADY_FAILED;
        board.add(slot.ordinal(), 1);
        board.set(Slot.UNSETTLED.ordinal(), 0);     // the listener runs after the settle
        if (!settings.get("mode").equals("POSTGRES_INBOX")) {
            board.set(ChaosBoard.PHASE, HANDLING);
        }
    }

    private void haltMaybe(double chance, Slot point) {
        if (random.nextDouble() < chance) {
            board.add(Slot.UNSETTLED_AT_HALT.ordinal(), board.get(Slot.UNSETTLED.ordinal()));
            board.add(point.ordinal(), 1);
            Runtime.getRuntime().halt(3);
        }
    }

    /**
     * A connection failure (SQLSTATE class 08) or a server shutdown (57P), or a store that cannot reach its server,
     * here or as a cause.
     */
    private static boolean serverGone(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().startsWith("08") || sql.getSQLState().startsWith("57P"))) {
                return true;
            }
            if (cause instanceof DedupStoreException store && store.isRetryable()) {
                return true;
            }
        }
        return false;
    }
}
