package dev.dedup.kafka.example;

import dev.dedup.DedupStore;
import dev.dedup.ResultCodec;
import dev.dedup.kafka.DeadLetterTopic;
import dev.dedup.kafka.KafkaRecordProcessor;
import dev.dedup.kafka.PollResult;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;

/**
 * The batch and inbox modes of docs/kafka.md: reservations written to PostgreSQL in the transaction that holds their
 * records' claims, one transaction per partition batch; and a processor that settles each batch at once.
 */
public final class ReserveInbox {
    private final KafkaRecordProcessor<String, String, Void> processor;
    private final String reservations;

    /**
     * @param consumer with {@code enable.auto.commit=false}
     * @param producer for the dead letters
     * @param store the PostgreSQL store, in the reservations' database
     * @param dataSource a pool on that database
     * @param reservations the table of the reservations: {@code (orders text)}
     */
    public ReserveInbox(Consumer<String, String> consumer, Producer<String, String> producer,
            PostgresDedupStore store, DataSource dataSource, String reservations) {
        this.reservations = reservations;
        // kafka-doc:inbox
        processor = KafkaRecordProcessor.builder(consumer, store, ResultCodec.none())
                .inbox(dataSource, store::inTransaction)   // a pool: one connection per partition batch
                .deadLetters(new DeadLetterTopic<>(producer))
                .build();
        // end
    }

    /**
     * Polls once; each partition batch commits its claims and reservations together, then its offsets.
     *
     * @return what was done with the records
     */
    public PollResult<String, String, Void> pollOnce() {
        // kafka-doc:inbox-poll
        return processor.poll(Duration.ofMillis(500), (record, transaction) -> {
            reserve(transaction, record.value());   // through the batch's transaction; never commit it here
            return null;
        });
        // end
    }

    private void reserve(Connection transaction, String order) throws SQLException {
        try (PreparedStatement insert = transaction.prepareStatement("INSERT INTO " + reservations
                + " (orders) VALUES (?)")) {
            insert.setString(1, order);
            insert.executeUpdate();
        }
    }

    /**
     * A processor in the batch mode.
     *
     * @param consumer with {@code enable.auto.commit=false}
     * @param producer for the dead letters
     * @param store any store
     * @return a processor that settles each partition batch with one settleAll
     */
    public static KafkaRecordProcessor<String, String, Void> batched(Consumer<String, String> consumer,
            Producer<String, String> producer, DedupStore store) {
        // kafka-doc:batch-mode
        return KafkaRecordProcessor.builder(consumer, store, ResultCodec.none())
                .settleInBatches()      // one claimAll and one settleAll per partition batch
                .deadLetters(new DeadLetterTopic<>(producer))
                .build();
        // end
    }
}
