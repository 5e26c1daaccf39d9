package dev.dedup.kafka.example;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.kafka.RecordKeys;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Consume-transform-produce with a database write in the same step: each input record (an order) becomes a row of
 * the ledger in PostgreSQL and a confirmation on the output topic; the confirmations and the input offsets commit in
 * one Kafka transaction.
 *
 * <p>Kafka's transaction covers the output and the offsets, not the ledger. A crash after the ledger's commit and
 * before Kafka's aborts the confirmations and the offsets, and the redelivery writes the ledger again. With the dedup
 * claim in the ledger's own transaction (the PostgreSQL inbox), the redelivery finds the order completed, writes
 * nothing, and sends the same confirmation again from the stored result.
 */
public final class TransformPipeline {
    private static final RecordKeys<String, String> KEYS = RecordKeys.header();

    private final Consumer<String, String> consumer;
    private final Producer<String, String> producer;
    private final Connection db;
    private final PostgresDedupStore inbox;
    private final String ledger;
    private final String output;
    private final AfterLedger afterLedger;

    /** Called after each ledger commit, before the Kafka commit: where a test crashes the pipeline. */
    @FunctionalInterface
    public interface AfterLedger {
        /**
         * Runs after the ledger write of one record is committed.
         *
         * @param record the record just written
         */
        void written(ConsumerRecord<String, String> record);
    }

    /**
     * @param consumer reads the input with {@code isolation.level=read_committed} and no auto-commit
     * @param producer has a {@code transactional.id}, and {@code initTransactions()} was called
     * @param db the ledger's connection
     * @param inbox the store whose claim shares the ledger's transaction, or null for Kafka's transaction alone
     * @param ledger the ledger table: {@code (message_id text, order_id text, id bigserial)}
     * @param output the topic of the confirmations
     * @param afterLedger called after each ledger commit
     */
    public TransformPipeline(Consumer<String, String> consumer, Producer<String, String> producer, Connection db,
            PostgresDedupStore inbox, String ledger, String output, AfterLedger afterLedger) {
        this.consumer = consumer;
        this.producer = producer;
        this.db = db;
        this.inbox = inbox;
        this.ledger = ledger;
        this.output = output;
        this.afterLedger = afterLedger;
    }

    /**
     * Polls once and handles the records in one Kafka transaction.
     *
     * @return the number of records handled
     * @throws SQLException when the ledger fails
     */
    public int pollOnce() throws SQLException {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) {
            return 0;
        }
        // kafka-doc:transform
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<String, String> record : records) {
            String confirmation = inbox == null ? write(record) : writeOnce(record);
            afterLedger.written(record);
            producer.send(new ProducerRecord<>(output, record.key(), confirmation));
            offsets.put(new TopicPartition(record.topic(), record.partition()),
                    new OffsetAndMetadata(record.offset() + 1));
        }
        // Output and offsets commit together; the ledger committed on its own, before.
        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
        producer.commitTransaction();
        // end
        return records.count();
    }

    /** Kafka's transaction alone: the ledger write commits on its own and runs again on every redelivery. */
    private String write(ConsumerRecord<String, String> record) throws SQLException {
        db.setAutoCommit(true);
        return insert(record);
    }

    // kafka-doc:transform-inbox
    /** The claim, the ledger row and the completion commit in one PostgreSQL transaction. */
    private String writeOnce(ConsumerRecord<String, String> record) throws SQLException {
        db.setAutoCommit(false);
        try {
            DedupStore claims = inbox.inTransaction(db);
            ClaimResult claimed = claims.claim(KEYS.keyOf(record), Duration.ofSeconds(30));
            if (claimed instanceof Duplicate done) {
                db.rollback();
                // Written before, and its Kafka transaction aborted: send the same confirmation again.
                return new String(done.result().orElseThrow(), StandardCharsets.UTF_8);
            }
            String confirmation = insert(record);
            if (!claims.complete((Claim) claimed, Duration.ofDays(7), confirmation.getBytes(StandardCharsets.UTF_8))) {
                throw new IllegalStateException("not this transaction's claim: " + record.value());
            }
            db.commit();
            return confirmation;
        } finally {
            if (!db.getAutoCommit()) {
                db.rollback();      // a no-op after the commit; undoes everything after a failure
            }
        }
    }
    // end

    private String insert(ConsumerRecord<String, String> record) throws SQLException {
        try (PreparedStatement insert = db.prepareStatement("INSERT INTO " + ledger + " (message_id, order_id)"
                + " VALUES (?, ?) RETURNING id")) {
            insert.setString(1, KEYS.keyOf(record));
            insert.setString(2, record.value());
            try (ResultSet id = insert.executeQuery()) {
                id.next();
                return "confirmed " + record.value() + " as ledger row " + id.getLong(1);
            }
        }
    }
}
