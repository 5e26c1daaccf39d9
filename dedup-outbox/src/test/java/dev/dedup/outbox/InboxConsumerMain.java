package dev.dedup.outbox;

import com.rabbitmq.client.Channel;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.RebalanceInProgressException;

/**
 * A consumer process for {@link OutboxChaosTest}: reads the relays' events from Kafka (offsets committed after each
 * poll) or from a RabbitMQ queue (manual acks), and applies each with the inbox of the outbox's database (PostgreSQL
 * or MariaDB): the claim of its
 * {@code message-id}, the effect (a row in the second schema's table) and the completion in one transaction. The driver
 * SIGKILLs it at random, so a delivery applied but not yet acknowledged comes again and the inbox absorbs it.
 *
 * <p>Arguments: the board, then {@code database=} ({@link TestDatabase}), {@code jdbcUrl=}, {@code inbox=} (the inbox's table), {@code applied=} (the effect's
 * table, schema-qualified), {@code broker=}, and {@code topic=} with {@code group=}, or {@code queue=}. The brokers'
 * addresses come from the environment, as in the test.
 */
public final class InboxConsumerMain {
    /** The board's slots. */
    enum Slot {
        PHASE, DELIVERIES, APPLIED, DUPLICATES,
        /** Deaths from the Kafka client's own race (as in dedup-kafka's chaos consumer), which end it like a crash. */
        CLIENT_RACES,
        ERRORS, COUNT
    }

    static final long IDLE = 0;
    /** From a delivery until its transaction committed or rolled back. */
    static final long APPLYING = 1;
    /** Applied and committed; the broker not told yet (offsets or ack). */
    static final long APPLIED_NOT_ACKNOWLEDGED = 2;
    /** From the JVM's start until it consumes: connecting, joining the group. */
    static final long STARTING = 3;
    /** Records per poll, and so per offset commit: a kill repeats at most this many. */
    private static final int MAX_POLL_RECORDS = 50;

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration RETENTION = Duration.ofDays(1);

    private final ChaosBoard board;
    private final Map<String, String> options;
    private final Connection db;
    private final Function<Connection, DedupStore> inbox;
    private final String applyOrder;

    private InboxConsumerMain(ChaosBoard board, Map<String, String> options) throws SQLException {
        this.board = board;
        this.options = options;
        TestDatabase database = TestDatabase.valueOf(options.get("database"));
        DataSource dataSource = database.unpooled(options.get("jdbcUrl"));
        this.db = dataSource.getConnection();
        db.setAutoCommit(false);
        this.inbox = database.inbox(dataSource, options.get("inbox"));
        this.applyOrder = database.applyOrder(options.get("applied"));
    }

    public static void main(String[] args) {
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), Slot.COUNT.ordinal());
        board.set(ChaosBoard.PHASE, STARTING);
        try {
            InboxConsumerMain consumer = new InboxConsumerMain(board, ProcessArguments.afterBoard(args));
            if (consumer.options.get("broker").equals("kafka")) {
                consumer.fromKafka();
            } else {
                consumer.fromRabbitMq();
            }
        } catch (Throwable e) {
            boolean race = e instanceof IllegalStateException
                    && String.valueOf(e.getMessage()).startsWith("No current assignment for partition");
            board.add((race ? Slot.CLIENT_RACES : Slot.ERRORS).ordinal(), 1);
            ConsumerProcess.printError(e);
            Runtime.getRuntime().halt(1);
        }
    }

    private void fromKafka() throws SQLException {
        try (KafkaConsumer<String, byte[]> consumer = OutboxTestSupport.consumer(options.get("group"),
                MAX_POLL_RECORDS)) {
            consumer.subscribe(List.of(options.get("topic")));
            while (true) {
                ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(200));
                if (board.get(ChaosBoard.PHASE) == STARTING) {
                    board.set(ChaosBoard.PHASE, IDLE);
                }
                for (ConsumerRecord<String, byte[]> record : records) {
                    handle(OutboxTestSupport.header(record, "message-id"), record.key(), record.value());
                }
                if (!records.isEmpty()) {
                    try {
                        consumer.commitSync();
                    } catch (CommitFailedException | RebalanceInProgressException e) {
                        // The partitions moved on: their new owner reads them again from the last commit.
                    }
                    board.set(ChaosBoard.PHASE, IDLE);
                }
            }
        }
    }

    private void fromRabbitMq() throws Exception {
        com.rabbitmq.client.Connection connection = OutboxTestSupport.rabbitFactory().newConnection("outbox-inbox");
        Channel channel = connection.createChannel();
        channel.basicQos(MAX_POLL_RECORDS);
        board.set(ChaosBoard.PHASE, IDLE);     // before the first delivery can set it
        channel.basicConsume(options.get("queue"), false, (tag, delivery) -> {
            try {
                handle(delivery.getProperties().getMessageId(), delivery.getEnvelope().getRoutingKey(),
                        delivery.getBody());
            } catch (SQLException e) {
                throw new java.io.IOException(e);   // the client closes the channel: the loop below ends the process
            }
            channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
            board.set(ChaosBoard.PHASE, IDLE);
        }, tag -> { });
        while (channel.isOpen()) {
            Thread.sleep(200);
        }
        throw new IllegalStateException("the channel closed: " + channel.getCloseReason());
    }

    /** One delivery: claim, effect and completion in one transaction, or a rollback if the inbox has it already. */
    private void handle(String messageId, String sku, byte[] body) throws SQLException {
        board.set(ChaosBoard.PHASE, APPLYING);
        board.add(Slot.DELIVERIES.ordinal(), 1);
        DedupStore store = inbox.apply(db);
        if (store.claim(messageId, LEASE) instanceof Claim claim) {
            try (PreparedStatement effect = db.prepareStatement(applyOrder)) {
                effect.setInt(1, Integer.parseInt(new String(body, StandardCharsets.UTF_8)));
                effect.setString(2, sku);
                effect.setString(3, messageId);
                effect.executeUpdate();
            }
            if (!store.complete(claim, RETENTION, null)) {
                throw new IllegalStateException("complete refused for " + messageId);
            }
            db.commit();
            board.set(ChaosBoard.PHASE, APPLIED_NOT_ACKNOWLEDGED);
            board.add(Slot.APPLIED.ordinal(), 1);
        } else {
            db.rollback();
            board.set(ChaosBoard.PHASE, APPLIED_NOT_ACKNOWLEDGED);
            board.add(Slot.DUPLICATES.ordinal(), 1);
        }
    }
}
