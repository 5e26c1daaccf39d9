package dev.dedup.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DeliverCallback;
import com.rabbitmq.client.Delivery;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.TestServers;
import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * One consumer process of {@link ChaosOnRabbitMqTest}: its own JVM, broker connection, database connection and store.
 * The driver kills it with SIGKILL; it also halts itself ({@link Runtime#halt}) at chosen points, after counting the
 * halt on its {@link ChaosBoard}. The board's phase says where it stood when killed. The broker requeues its unacked
 * deliveries as soon as its connection drops.
 *
 * <p>The effect of a delivery is one transaction on the process's connection: a reservation and its effect-log row
 * ({@link Reservations}). Three kinds:
 * <ul>
 *   <li>CALLBACK: {@link IdempotentDeliverCallback} over the PostgreSQL or Redis store; the effect commits on its own,
 *       then the completion is stored, then the delivery is acked (or parked in the retry queue, see
 *       {@link DedupQueues}).
 *   <li>INBOX: the transactional inbox by hand, as {@code docs/postgresql.md} shows it: the claim, the effect and the
 *       completion in one transaction ({@link PostgresDedupStore#inTransaction}), committed, then acked. The callback
 *       has no transactional mode.
 *   <li>NAIVE: the control; the effect for every delivery, then the ack.
 * </ul>
 *
 * <p>Arguments: the board's file, then {@code key=value}: kind (CALLBACK, INBOX, NAIVE), store (POSTGRES, REDIS; for
 * CALLBACK), vhost, queue (the work queue), retryDelayMillis, run (the prefix of the run's tables), namespace, redis
 * (host:port), seed, halt (chance per delivery of a halt before the effect, and again after it), haltAfterCompletion
 * (chance per delivery of a halt between its completion and its ack), leaseMillis.
 */
public final class ChaosConsumerMain {
    /** The board's slots. */
    enum Slot {
        PHASE, DELIVERIES, HALT_BEFORE_EFFECT, HALT_AFTER_EFFECT, HALT_AFTER_COMPLETION, PROCESSED,
        ALREADY_PROCESSED, IN_PROGRESS_ELSEWHERE, FAILED, LEASE_LOST, ALREADY_FAILED,
        /** Deliveries parked in the retry queue (the callback's {@link Settlement#RETRY_LATER}). */
        PARKED,
        /** Inbox transactions rolled back after a failure, their delivery requeued. */
        ROLLED_BACK,
        /** Times the effects' connection broke and was made again. */
        RECONNECTS,
        /** Waits for a server (PostgreSQL, the store, the broker) that was unavailable when the process started. */
        WAITS_AT_START,
        /** Processes that reached their first {@code basicConsume}. */
        STARTS,
        /** Milliseconds from the JVM's start to its {@code basicConsume}, summed over {@link #STARTS}. */
        START_MILLIS,
        ERRORS;

        static final int COUNT = values().length;
    }

    /** The phase slot's values. */
    static final long IDLE = 0;
    /** In the handler, before the effect's commit was sent. */
    static final long HANDLING = 1;
    /** From the effect's commit until its completion is stored (in the inbox, until the transaction's commit). */
    static final long EFFECT_TO_COMPLETION = 2;
    /** The delivery's completion is stored; its ack is not sent yet. */
    static final long COMPLETED = 3;
    /** Before its first {@code basicConsume}: connecting to the servers. */
    static final long STARTING = 4;

    private static final Duration RETENTION = Duration.ofMinutes(10);
    private static final int PREFETCH = 20;

    private final ChaosBoard board;
    private final Map<String, String> settings;
    private final Random random;
    private final String run;
    private final String kind;
    private final double halt;
    private final double haltAfterCompletion;
    private final Duration lease;
    private final String name;
    /** The effects' connection (in the inbox, the claims' too); replaced after it broke. */
    private java.sql.Connection db;
    private volatile boolean dbBroken;

    private ChaosConsumerMain(ChaosBoard board, Map<String, String> settings) {
        this.board = board;
        this.settings = settings;
        this.random = new Random(Long.parseLong(settings.get("seed")));
        this.run = settings.get("run");
        this.kind = settings.get("kind");
        this.halt = Double.parseDouble(settings.get("halt"));
        this.haltAfterCompletion = Double.parseDouble(settings.get("haltAfterCompletion"));
        this.lease = Duration.ofMillis(Long.parseLong(settings.getOrDefault("leaseMillis", "2000")));
        this.name = "pid-" + ProcessHandle.current().pid();
    }

    public static void main(String[] args) {
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), Slot.COUNT);
        board.set(ChaosBoard.PHASE, STARTING);
        Map<String, String> settings = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] pair = args[i].split("=", 2);
            settings.put(pair[0], pair[1]);
        }
        try {
            new ChaosConsumerMain(board, settings).run();
        } catch (Throwable e) {
            board.add(Slot.ERRORS.ordinal(), 1);
            ConsumerProcess.printError(e);
            Runtime.getRuntime().halt(1);
        }
        Runtime.getRuntime().halt(0);
    }

    private void run() throws Exception {
        // A service waits for its servers at start-up, as a connection pool would, instead of dying in a loop. The
        // three connect at once: the driver kills a consumer every 1-2 s, so the start is a good part of its life.
        ConnectionFactory factory = RabbitTestBroker.factoryOn(settings.get("vhost"));
        factory.setExceptionHandler(new StrictAboutConsumers(board));
        ExecutorService starting = Executors.newFixedThreadPool(3);
        Future<java.sql.Connection> effects = starting.submit(() -> untilAvailable(this::connect));
        Future<DedupStore> opened = starting.submit(() -> untilAvailable(this::openStore));
        Future<Connection> broker = starting.submit(() -> untilAvailable(() -> factory.newConnection(name)));
        starting.shutdown();
        db = effects.get();
        DedupStore store = opened.get();
        Channel channel = broker.get().createChannel();
        channel.basicQos(PREFETCH);
        DedupQueues queues = DedupQueues.named(settings.get("queue"))
                .retryDelay(Duration.ofMillis(Long.parseLong(settings.get("retryDelayMillis"))));
        DeliverCallback callback = switch (kind) {
            case "CALLBACK" -> callback(channel, queues, store);
            case "INBOX" -> inbox(channel, (PostgresDedupStore) store);
            case "NAIVE" -> naive(channel);
            default -> throw new IllegalArgumentException("unknown kind " + kind);
        };
        board.set(ChaosBoard.PHASE, IDLE);     // before the first delivery can set it
        channel.basicConsume(queues.queue(), false, (tag, delivery) -> {
            board.set(ChaosBoard.PHASE, HANDLING);
            board.add(Slot.DELIVERIES.ordinal(), 1);
            callback.handle(tag, delivery);
            board.set(ChaosBoard.PHASE, IDLE);
        }, tag -> { });
        board.add(Slot.STARTS.ordinal(), 1);
        board.add(Slot.START_MILLIS.ordinal(), ProcessHandle.current().info().startInstant()
                .map(start -> Duration.between(start, java.time.Instant.now()).toMillis()).orElse(0L));
        // The client's consumer thread does the work; this one only notices a channel the broker closed, which is
        // an error of the test (an ack of an unknown delivery, say), never a part of the chaos.
        while (channel.isOpen()) {
            Thread.sleep(200);
        }
        throw new IllegalStateException(name + ": the channel closed: " + channel.getCloseReason());
    }

    private java.sql.Connection connect() throws SQLException {
        java.sql.Connection connection = DriverManager.getConnection(postgresUrl());
        connection.setAutoCommit(false);
        return connection;
    }

    private static String postgresUrl() {
        return TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);
    }

    /** The callback's store; the inbox's, whose claims go in the effects' transaction; none for the control. */
    private DedupStore openStore() {
        if (kind.equals("NAIVE")) {
            return null;
        }
        String store = kind.equals("INBOX") ? "POSTGRES" : settings.get("store");
        return switch (store) {
            // The claims table is the run's, made by the driver (Reservations#store).
            case "POSTGRES" -> DedupStores.open(postgresUrl() + "&table=" + run + "_claims&namespace=rabbit"
                    + "&poolSize=2&timeout=2s");
            case "REDIS" -> DedupStores.open("redis://" + settings.get("redis") + "?namespace="
                    + settings.get("namespace") + "&timeout=1s");
            default -> throw new IllegalArgumentException("unknown store " + store);
        };
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

    /** A store outside the effect's transaction: the effect commits on its own, then the completion is stored. */
    private DeliverCallback callback(Channel channel, DedupQueues queues, DedupStore store) {
        IdempotentConsumer<Delivery, Void> consumer = IdempotentConsumer.builder(store, RabbitKeys.messageId(),
                ResultCodec.none()).lease(lease).retention(RETENTION).build();
        return IdempotentDeliverCallback.builder(channel, queues, consumer, delivery -> {
            if (dbBroken) {
                reconnect();
            }
            apply(delivery, true);
            return null;
        }).listener((delivery, outcome, settlement) -> {
            count(outcome);
            if (settlement == Settlement.RETRY_LATER) {
                board.add(Slot.PARKED.ordinal(), 1);
            }
            // The store calls are over: the window between effect and completion is closed.
            board.set(ChaosBoard.PHASE, COMPLETED);
            if (settlement == Settlement.ACK) {
                haltMaybe(haltAfterCompletion, Slot.HALT_AFTER_COMPLETION);
            }
        }).build();
    }

    /**
     * The transactional inbox: the claim, the effect and the completion in one transaction on the process's
     * connection, committed, then acked. A death before the commit is answered by the server with a rollback, so the
     * redelivery starts clean. A failure rolls back and requeues the delivery, after reconnecting if the server went
     * away (so there is no hot loop while it is down).
     */
    private DeliverCallback inbox(Channel channel, PostgresDedupStore store) {
        return (tag, delivery) -> {
            long deliveryTag = delivery.getEnvelope().getDeliveryTag();
            String id = delivery.getProperties().getMessageId();
            try {
                DedupStore inbox = store.inTransaction(db);
                // Only committed records are visible, and they are all completed: a duplicate is done work. A
                // concurrent delivery of the key waits here on the uncommitted row until that commit or rollback.
                if (inbox.claim(id, lease) instanceof Claim claim) {
                    apply(delivery, false);
                    if (!inbox.complete(claim, RETENTION, null)) {
                        throw new SQLException("the claim on " + id + " is not this transaction's");
                    }
                    db.commit();
                    board.add(Slot.PROCESSED.ordinal(), 1);
                } else {
                    db.rollback();
                    board.add(Slot.ALREADY_PROCESSED.ordinal(), 1);
                }
            } catch (SQLException | DedupStoreException | IllegalStateException e) {
                board.add(Slot.FAILED.ordinal(), 1);
                if (!serverGone(e)) {
                    throw new IllegalStateException(name + ": the inbox failed on " + id, e);
                }
                try {
                    // The server rolled the open transaction back with the connection (or never committed it).
                    reconnect();
                } catch (Exception gone) {
                    throw new IllegalStateException(name + ": PostgreSQL did not come back", gone);
                }
                board.add(Slot.ROLLED_BACK.ordinal(), 1);
                channel.basicNack(deliveryTag, false, true);
                return;
            }
            board.set(ChaosBoard.PHASE, COMPLETED);
            haltMaybe(haltAfterCompletion, Slot.HALT_AFTER_COMPLETION);
            channel.basicAck(deliveryTag, false);
        };
    }

    /** The control: the effect for every delivery, then the ack. */
    private DeliverCallback naive(Channel channel) {
        return (tag, delivery) -> {
            apply(delivery, true);
            board.set(ChaosBoard.PHASE, COMPLETED);
            channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
        };
    }

    /** The handler: the effect, with a halt point on each side of it. */
    private void apply(Delivery delivery, boolean commit) {
        haltMaybe(halt, Slot.HALT_BEFORE_EFFECT);
        try {
            Reservations.reserveIn(db, run, delivery.getProperties().getMessageId(), name,
                    new String(delivery.getBody(), StandardCharsets.UTF_8));
            // From here the effect may have happened: a death before the completion is stored may double it.
            board.set(ChaosBoard.PHASE, EFFECT_TO_COMPLETION);
            if (commit) {
                db.commit();
            }
        } catch (SQLException e) {
            dbBroken |= serverGone(e);
            try {
                if (!dbBroken) {
                    db.rollback();
                }
            } catch (SQLException ignored) {
                dbBroken = true;
            }
            throw new IllegalStateException(name + ": the effect failed", e);
        }
        haltMaybe(halt, Slot.HALT_AFTER_EFFECT);
    }

    /** After each delivery's store calls: its outcome counted. */
    private void count(ProcessingOutcome<?> outcome) {
        Slot slot = outcome instanceof ProcessingOutcome.Processed ? Slot.PROCESSED
                : outcome instanceof ProcessingOutcome.AlreadyProcessed ? Slot.ALREADY_PROCESSED
                : outcome instanceof ProcessingOutcome.InProgressElsewhere ? Slot.IN_PROGRESS_ELSEWHERE
                : outcome instanceof ProcessingOutcome.Failed ? Slot.FAILED
                : outcome instanceof ProcessingOutcome.LeaseLost ? Slot.LEASE_LOST
                : Slot.ALREADY_FAILED;
        board.add(slot.ordinal(), 1);
    }

    private void haltMaybe(double chance, Slot point) {
        if (random.nextDouble() < chance) {
            board.add(point.ordinal(), 1);
            Runtime.getRuntime().halt(3);
        }
    }

    /**
     * A connection failure (SQLSTATE class 08) or a server shutdown (57P), or a store or broker that cannot be
     * reached, here or as a cause.
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
            if (cause instanceof java.net.ConnectException) {
                return true;
            }
        }
        return false;
    }

    /** A consumer callback that throws is an error of the test: counted, and the process ends. */
    private static final class StrictAboutConsumers extends com.rabbitmq.client.impl.ForgivingExceptionHandler {
        private final ChaosBoard board;

        StrictAboutConsumers(ChaosBoard board) {
            this.board = board;
        }

        @Override
        public void handleConsumerException(Channel channel, Throwable exception, com.rabbitmq.client.Consumer consumer,
                String consumerTag, String methodName) {
            board.add(Slot.ERRORS.ordinal(), 1);
            ConsumerProcess.printError(exception);
            Runtime.getRuntime().halt(1);
        }
    }
}
