package dev.dedup.outbox;

import dev.dedup.outbox.kafka.KafkaOutboxPublisher;
import dev.dedup.tck.chaos.ChaosBoard;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A relay process for {@link OutboxChaosOnKafkaTest}: relays the outbox to Kafka until killed, writing on its board
 * where it stands. Arguments: the board, then {@code jdbcUrl=}, {@code table=}, {@code bootstrap=}, {@code halt=}
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

    public static void main(String[] args) throws Exception {
        ChaosBoard board = ChaosBoard.open(Path.of(args[0]), Slot.COUNT.ordinal());
        Map<String, String> options = new HashMap<>();
        for (String argument : List.of(args).subList(1, args.length)) {
            int equals = argument.indexOf('=');
            options.put(argument.substring(0, equals), argument.substring(equals + 1));
        }
        Random random = new Random(Long.parseLong(options.get("seed")));
        double halt = Double.parseDouble(options.get("halt"));
        PGSimpleDataSource database = new PGSimpleDataSource();
        database.setUrl(options.get("jdbcUrl"));
        Outbox outbox = Outbox.builder(database).table(options.get("table")).build();
        Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, options.get("bootstrap"),
                ProducerConfig.LINGER_MS_CONFIG, 2);
        try (KafkaOutboxPublisher kafka = KafkaOutboxPublisher.create(config, Duration.ofSeconds(30))) {
            OutboxPublisher watched = events -> {
                board.set(Slot.PHASE.ordinal(), PUBLISHING);
                kafka.publish(events);
                board.set(Slot.PHASE.ordinal(), CONFIRMED_NOT_MARKED);
                board.add(Slot.CONFIRMED.ordinal(), events.size());
                if (random.nextDouble() < halt) {
                    board.add(Slot.HALTS.ordinal(), 1);
                    Runtime.getRuntime().halt(3);     // confirmed by Kafka, never marked: the next relay republishes
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
