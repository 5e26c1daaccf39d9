package dev.dedup.sqs;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.TestServers;
import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * One consumer process of {@link ChaosOnElasticMqTest}: its own JVM, SQS client (to the ElasticMQ server in the test's
 * JVM), PostgreSQL connection and store. The driver kills it with SIGKILL; the board's phase says where it stood.
 *
 * <p>The effect of a message is one effect-log row in PostgreSQL, committed on the process's connection. Three kinds:
 * <ul>
 *   <li>PROCESSOR: {@link SqsMessageProcessor} over the PostgreSQL store; the effect commits on its own, then the
 *       completion is stored, then the batch is deleted.
 *   <li>INBOX: the transactional inbox by hand, as {@code docs/postgresql.md} shows it: per message, the claim, the
 *       effect and the completion in one transaction ({@link PostgresDedupStore#inTransaction}), committed; then the
 *       batch is deleted. The processor has no transactional mode.
 *   <li>NAIVE: the control; the effect for every message, then the delete.
 * </ul>
 *
 * <p>Arguments: the board's file, then {@code key=value}: kind, queue (URL), run (the prefix of the run's tables),
 * leaseMillis, workMillis (the handler's work before each effect).
 */
public final class ChaosConsumerMain {
    /** The board's slots. */
    enum Slot {
        PHASE, RECEIVED, PROCESSED, ALREADY_PROCESSED, IN_PROGRESS_ELSEWHERE, FAILED, LEASE_LOST, STARTS, ERRORS;

        static final int COUNT = values().length;
    }

    static final long IDLE = 0;
    /** In the handler, before the effect was sent (in the inbox, before the transaction's commit returned). */
    static final long HANDLING = 1;
    /** From the effect's commit being sent until its completion is stored. */
    static final long EFFECT_TO_COMPLETION = 2;
    /** Before the first receive: connecting. */
    static final long STARTING = 3;

    private static final Duration RETENTION = Duration.ofMinutes(10);

    private final ChaosBoard board;
    private final Map<String, String> settings;
    private final String queue;
    private final Duration lease;
    /** The handler's work before its effect, so the kills find consumers in the middle of batches. */
    private final long workMillis;
    private final String name = "pid-" + ProcessHandle.current().pid();
    private Connection db;

    private ChaosConsumerMain(ChaosBoard board, Map<String, String> settings) {
        this.board = board;
        this.settings = settings;
        this.queue = settings.get("queue");
        this.lease = Duration.ofMillis(Long.parseLong(settings.get("leaseMillis")));
        this.workMillis = Long.parseLong(settings.get("workMillis"));
    }

    public static void main(String[] args) {
        ConsumerProcess.runMain(args, Slot.COUNT, Slot.ERRORS.ordinal(), STARTING,
                (board, settings) -> new ChaosConsumerMain(board, settings).run());
    }

    private void run() throws Exception {
        String postgres = TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);
        db = DriverManager.getConnection(postgres);
        SqsClient sqs = ElasticMq.connect(ClientOverrideConfiguration.builder().build());   // the test JVM's server
        board.add(Slot.STARTS.ordinal(), 1);
        switch (settings.get("kind")) {
            case "PROCESSOR" -> processor(sqs, DedupStores.open(postgres + "&table=" + settings.get("run")
                    + "_claims&namespace=sqs&poolSize=2&timeout=2s"));
            case "INBOX" -> inbox(sqs, (PostgresDedupStore) DedupStores.open(postgres + "&table="
                    + settings.get("run") + "_claims&namespace=sqs&poolSize=1&timeout=2s"));
            case "NAIVE" -> naive(sqs);
            default -> throw new IllegalArgumentException("unknown kind " + settings.get("kind"));
        }
    }

    /** The receive loop under test: the effect commits on its own, its completion is stored after. */
    private void processor(SqsClient sqs, DedupStore store) throws Exception {
        db.setAutoCommit(true);
        try (SqsMessageProcessor<Void> processor = SqsMessageProcessor.builder(sqs, queue, store, ResultCodec.none())
                .keys(SqsKeys.messageAttribute(SqsFixture.KEY_ATTRIBUTE))
                .lease(lease)
                .retention(RETENTION)
                .retryBackoff(Duration.ZERO, Duration.ofSeconds(1))
                .onOutcome(outcome -> {
                    count(outcome);
                    // The store calls are over: the window between effect and completion is closed.
                    board.set(ChaosBoard.PHASE, IDLE);
                })
                .build()) {
            board.set(ChaosBoard.PHASE, IDLE);
            while (true) {
                List<MessageOutcome<Void>> outcomes = processor.poll(Duration.ofSeconds(1), message -> {
                    board.set(ChaosBoard.PHASE, HANDLING);
                    Thread.sleep(workMillis);
                    // Set before the insert, which is its own commit: a death while it is in flight may leave it.
                    board.set(ChaosBoard.PHASE, EFFECT_TO_COMPLETION);
                    effect(key(message));
                    return null;
                });
                board.add(Slot.RECEIVED.ordinal(), outcomes.size());
            }
        }
    }

    /** Claim, effect and completion in one transaction per message; the batch's deletes after the commits. */
    private void inbox(SqsClient sqs, PostgresDedupStore store) throws Exception {
        db.setAutoCommit(false);
        IdempotentConsumer<Message, Void> consumer = IdempotentConsumer.builder(store,
                SqsKeys.messageAttribute(SqsFixture.KEY_ATTRIBUTE), ResultCodec.none())
                .lease(lease).retention(RETENTION).build();
        board.set(ChaosBoard.PHASE, IDLE);
        while (true) {
            List<Message> batch = receive(sqs);
            List<Message> done = new ArrayList<>();
            for (Message message : batch) {
                board.set(ChaosBoard.PHASE, HANDLING);
                ProcessingOutcome<Void> outcome;
                try {
                    outcome = consumer.inTransaction(store.inTransaction(db)).process(message, m -> {
                        Thread.sleep(workMillis);
                        effect(key(m));
                        return null;
                    });
                    if (outcome.shouldAck()) {
                        db.commit();
                        done.add(message);
                    } else {
                        db.rollback();
                    }
                } catch (RuntimeException | java.sql.SQLException e) {
                    db.rollback();
                    throw e;
                }
                count(outcome);
                board.set(ChaosBoard.PHASE, IDLE);
            }
            delete(sqs, done);
        }
    }

    /** The control: the effect for every message received, then the delete. */
    private void naive(SqsClient sqs) throws Exception {
        db.setAutoCommit(true);
        board.set(ChaosBoard.PHASE, IDLE);
        while (true) {
            List<Message> batch = receive(sqs);
            for (Message message : batch) {
                board.set(ChaosBoard.PHASE, HANDLING);
                Thread.sleep(workMillis);
                board.set(ChaosBoard.PHASE, EFFECT_TO_COMPLETION);
                effect(key(message));
            }
            delete(sqs, batch);
            board.set(ChaosBoard.PHASE, IDLE);
        }
    }

    private List<Message> receive(SqsClient sqs) {
        List<Message> batch = sqs.receiveMessage(b -> b.queueUrl(queue).maxNumberOfMessages(10).waitTimeSeconds(1)
                .visibilityTimeout((int) Math.max(1, lease.toSeconds())).messageAttributeNames("All")).messages();
        board.add(Slot.RECEIVED.ordinal(), batch.size());
        return batch;
    }

    private void delete(SqsClient sqs, List<Message> messages) {
        if (messages.isEmpty()) {
            return;
        }
        List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            entries.add(DeleteMessageBatchRequestEntry.builder().id(Integer.toString(i))
                    .receiptHandle(messages.get(i).receiptHandle()).build());
        }
        sqs.deleteMessageBatch(b -> b.queueUrl(queue).entries(entries));
    }

    private static String key(Message message) {
        return message.messageAttributes().get(SqsFixture.KEY_ATTRIBUTE).stringValue();
    }

    /** The effect: one row in the effect log, in the connection's current transaction (or on its own). */
    private void effect(String key) throws java.sql.SQLException {
        try (PreparedStatement insert = db.prepareStatement("INSERT INTO " + settings.get("run")
                + "_effects (key, consumer) VALUES (?, ?)")) {
            insert.setString(1, key);
            insert.setString(2, name);
            insert.executeUpdate();
        }
    }

    private void count(ProcessingOutcome<?> outcome) {
        Slot slot = outcome instanceof ProcessingOutcome.Processed ? Slot.PROCESSED
                : outcome instanceof ProcessingOutcome.AlreadyProcessed ? Slot.ALREADY_PROCESSED
                : outcome instanceof ProcessingOutcome.InProgressElsewhere ? Slot.IN_PROGRESS_ELSEWHERE
                : outcome instanceof ProcessingOutcome.LeaseLost ? Slot.LEASE_LOST
                : Slot.FAILED;
        board.add(slot.ordinal(), 1);
    }
}
