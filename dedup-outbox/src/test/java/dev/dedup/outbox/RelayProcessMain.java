package dev.dedup.outbox;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import dev.dedup.tck.chaos.ChaosBoard;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * A relay process for {@link OutboxChaosTest}: relays the outbox to Kafka or RabbitMQ until killed, writing on its board
 * where it stands. Arguments: the board, then {@code database=} ({@link TestDatabase}), {@code jdbcUrl=}, {@code table=}, {@code broker=}, {@code bootstrap=} or
 * {@code rabbitUrl=}, {@code halt=}
 * (the chance of halting itself between the broker's confirmation and the mark, the window a random SIGKILL
 * rarely hits), {@code seed=}.
 */
public final class RelayProcessMain {
    /** The board's slots. */
    enum Slot { PHASE, CONFIRMED, MARKED, HALTS, ERRORS, COUNT }

    static final long IDLE = 0;
    static final long PUBLISHING = 1;
    static final long CONFIRMED_NOT_MARKED = 2;

    private RelayProcessMain() {}

    /** The publisher for {@code broker=kafka} (with {@code bootstrap=}) or {@code broker=rabbitmq} ({@code rabbitUrl=}). */
    private static AutoCloseable broker(Map<String, String> options) throws Exception {
        if (options.get("broker").equals("kafka")) {
            return KafkaOutboxPublisher.create(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    options.get("bootstrap"), ProducerConfig.LINGER_MS_CONFIG, 2), Duration.ofSeconds(30));
        }
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(options.get("rabbitUrl"));
        Connection connection = factory.newConnection("outbox-relay");
        ConfirmedPublisher confirmed = ConfirmedPublisher.open(connection, Duration.ofSeconds(30));
        return new RabbitRelayConnection(connection, new RabbitOutboxPublisher(confirmed));
    }

    /** A RabbitMQ publisher with the connection it lives on. */
    private record RabbitRelayConnection(Connection connection, RabbitOutboxPublisher publisher)
            implements OutboxPublisher, AutoCloseable {
        @Override
        public void publish(List<OutboxEvent> events) {
            publisher.publish(events);
        }

        @Override
        public void close() throws IOException {
            connection.close();
        }
    }

    public static void main(String[] args) throws Exception {
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), Slot.COUNT.ordinal());
        Map<String, String> options = ProcessArguments.afterBoard(args);
        Random random = new Random(Long.parseLong(options.get("seed")));
        double halt = Double.parseDouble(options.get("halt"));
        DataSource database = TestDatabase.valueOf(options.get("database")).unpooled(options.get("jdbcUrl"));
        Outbox outbox = Outbox.builder(database).table(options.get("table")).build();
        try (AutoCloseable connection = broker(options)) {
            OutboxPublisher publisher = (OutboxPublisher) connection;
            OutboxPublisher watched = events -> {
                board.set(Slot.PHASE.ordinal(), PUBLISHING);
                publisher.publish(events);
                board.set(Slot.PHASE.ordinal(), CONFIRMED_NOT_MARKED);
                board.add(Slot.CONFIRMED.ordinal(), events.size());
                if (random.nextDouble() < halt) {
                    board.add(Slot.HALTS.ordinal(), 1);
                    Runtime.getRuntime().halt(3);     // confirmed by the broker, never marked: the next relay republishes
                }
            };
            OutboxRelay relay = OutboxRelay.builder(outbox, watched).batchSize(50).build();
            while (true) {
                try {
                    int marked = relay.relayOnce();
                    board.add(Slot.MARKED.ordinal(), marked);
                    board.set(Slot.PHASE.ordinal(), IDLE);
                    if (marked == 0) {
                        Thread.sleep(20);
                    }
                } catch (RuntimeException e) {
                    board.add(Slot.ERRORS.ordinal(), 1);
                    System.out.println("relay error: " + e);
                    Thread.sleep(100);
                }
            }
        }
    }
}
