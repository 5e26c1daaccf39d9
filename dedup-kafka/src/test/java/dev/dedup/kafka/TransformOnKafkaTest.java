package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.kafka.example.TransformPipeline;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The consume-transform-produce example on the real broker and PostgreSQL: 20 orders, and a crash after the 12th
 * ledger commit, before the Kafka commit; a new instance with the same transactional id takes over and finishes.
 */
class TransformOnKafkaTest {
    private static final int ORDERS = 20;
    private static final int CRASH_AFTER = 12;

    /** What a crashed pipeline throws; its Kafka transaction is left open, as after a killed process. */
    private static final class Crash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Crash() {
            super("crashed between the ledger commit and the Kafka commit", null, false, false);
        }
    }

    record Result(Map<String, Integer> ledgerRows, List<String> confirmations, List<String> ledgerConfirmations) {}

    @Test
    @DisplayName("Kafka's transaction alone: the output is exact, but the crash writes the ledger twice")
    void kafkaTransactionAloneDoublesTheLedger() throws Exception {
        Result result = run(null);
        assertThat(result.confirmations()).hasSize(ORDERS).doesNotHaveDuplicates();
        assertThat(result.ledgerRows()).hasSize(ORDERS);
        assertThat(result.ledgerRows().values().stream().mapToInt(Integer::intValue).sum())
                .as("ledger rows: the orders written before the crash are written again")
                .isGreaterThan(ORDERS);
    }

    @Test
    @DisplayName("with the claim in the ledger's transaction (PostgreSQL inbox): one ledger row and one output each")
    void inboxMakesItExact() throws Exception {
        try (DedupStore store = KafkaTestSupport.postgresStore("kafka-transform-" + unique())) {
            Result result = run((PostgresDedupStore) store);
            assertThat(result.ledgerRows()).hasSize(ORDERS).allSatisfy((order, rows) -> assertThat(rows).isOne());
            // The redelivered orders sent the confirmation stored with their claim: the same ledger row.
            assertThat(result.confirmations()).hasSize(ORDERS)
                    .containsExactlyInAnyOrderElementsOf(result.ledgerConfirmations());
        }
    }

    private Result run(PostgresDedupStore inbox) throws Exception {
        String input = createTopic("orders", 1);
        String output = createTopic("confirmations", 1);
        String group = "transform-" + unique();
        String transactionalId = "transform-" + unique();
        String ledger = "kafka_ledger_" + unique();
        try (Connection db = KafkaTestSupport.postgres()) {
            try (var statement = db.createStatement()) {
                statement.execute("CREATE TABLE " + ledger + " (id bigserial PRIMARY KEY, message_id text NOT NULL,"
                        + " order_id text NOT NULL)");
            }
            try {
                try (KafkaProducer<String, String> producer = KafkaTestSupport.producer()) {
                    for (int i = 1; i <= ORDERS; i++) {
                        send(producer, input, 0, "order-" + i, "order-" + i);
                    }
                }
                int[] written = {0};
                boolean crashed = runUntil(input, group, transactionalId, db, inbox, ledger, output, record -> {
                    if (++written[0] == CRASH_AFTER) {
                        throw new Crash();
                    }
                });
                assertThat(crashed).as("the first instance crashed").isTrue();
                assertThat(runUntil(input, group, transactionalId, db, inbox, ledger, output, record -> { }))
                        .as("the second instance finished").isFalse();
                db.setAutoCommit(true);     // the inbox left it off
                Result result = new Result(ledgerRows(db, ledger), confirmations(output),
                        ledgerConfirmations(db, ledger));
                System.out.printf("transform (%s): %d orders, %d ledger rows, %d confirmations%n",
                        inbox == null ? "Kafka transaction alone" : "PostgreSQL inbox", ORDERS,
                        result.ledgerConfirmations().size(), result.confirmations().size());
                return result;
            } finally {
                dropLedger(ledger);
            }
        }
    }

    /** On a connection of its own: a failed run may have left the pipeline's connection broken. */
    private static void dropLedger(String ledger) throws Exception {
        try (Connection db = KafkaTestSupport.postgres(); var statement = db.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + ledger);
        }
    }

    /** One pipeline instance: runs until every input is committed (false) or it crashes (true). */
    private static boolean runUntil(String input, String group, String transactionalId, Connection db,
            PostgresDedupStore inbox, String ledger, String output, TransformPipeline.AfterLedger afterLedger)
            throws Exception {
        try (KafkaConsumer<String, String> consumer = readCommitted(group);
                KafkaProducer<String, String> producer = transactional(transactionalId)) {
            // A new instance with the same id fences the crashed one and aborts its open transaction.
            producer.initTransactions();
            consumer.subscribe(List.of(input));
            var pipeline = new TransformPipeline(consumer, producer, db, inbox, ledger, output, afterLedger);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!committed(group, input).equals(Map.of(0, (long) ORDERS))) {
                assertThat(System.nanoTime() - deadline).as("the inputs committed within 60 s").isNegative();
                try {
                    pipeline.pollOnce();
                } catch (Crash crash) {
                    return true;    // closed below with its transaction open: nothing committed to Kafka
                }
            }
            return false;
        }
    }

    private static KafkaConsumer<String, String> readCommitted(String group) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaTestSupport.bootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
    }

    private static KafkaProducer<String, String> transactional(String transactionalId) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaTestSupport.bootstrap());
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    /** Every committed confirmation on the output topic, read to its end (aborted ones are skipped). */
    private static List<String> confirmations(String output) throws Exception {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = readCommitted("read-" + unique())) {
            TopicPartition partition = new TopicPartition(output, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (consumer.position(partition) < end) {
                assertThat(System.nanoTime() - deadline).as("the output read within 30 s").isNegative();
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    private static Map<String, Integer> ledgerRows(Connection db, String ledger) throws Exception {
        Map<String, Integer> rows = new TreeMap<>();
        try (var statement = db.createStatement();
                ResultSet result = statement.executeQuery("SELECT message_id, count(*) FROM " + ledger
                        + " GROUP BY message_id")) {
            while (result.next()) {
                rows.put(result.getString(1), result.getInt(2));
            }
        }
        return rows;
    }

    /** The confirmation each ledger row stands for, as the pipeline words it. */
    private static List<String> ledgerConfirmations(Connection db, String ledger) throws Exception {
        List<String> confirmations = new ArrayList<>();
        try (var statement = db.createStatement();
                ResultSet result = statement.executeQuery("SELECT order_id, id FROM " + ledger)) {
            while (result.next()) {
                confirmations.add("confirmed " + result.getString(1) + " as ledger row " + result.getLong(2));
            }
        }
        return confirmations;
    }
}
