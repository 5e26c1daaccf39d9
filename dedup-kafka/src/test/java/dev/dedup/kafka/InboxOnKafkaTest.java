package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.consumer;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupStore;
import dev.dedup.ProcessingOutcome;
import dev.dedup.RecordState;
import dev.dedup.ResultCodec;
import dev.dedup.store.postgres.PostgresDedupStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The inbox mode ({@link KafkaRecordProcessor.Builder#inbox}) on the real broker and PostgreSQL: each partition
 * batch's claims, effects (rows of a table of the test's own) and settle in one transaction, then the offsets.
 */
class InboxOnKafkaTest {
    private final List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();
    private PostgresDedupStore store;
    private DedupStore[] view;
    private WatchedStore watched;
    private HikariDataSource pool;
    private KafkaProducer<String, String> producer;
    private KafkaConsumer<String, String> consumer;
    private String topic;
    private String group;
    private String effects;

    @BeforeEach
    void setUp() throws Exception {
        store = (PostgresDedupStore) KafkaTestSupport.postgresStore("kafka-inbox-" + unique());
        view = new DedupStore[1];
        watched = new WatchedStore(() -> view[0]);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(KafkaTestSupport.postgresJdbcUrl());
        config.setMaximumPoolSize(2);
        pool = new HikariDataSource(config);
        effects = "kafka_inbox_" + unique();
        try (Connection db = pool.getConnection(); var statement = db.createStatement()) {
            statement.execute("CREATE TABLE " + effects + " (id text NOT NULL)");
        }
        producer = producer();
        topic = createTopic("inbox", 1);
        group = "inbox-" + unique();
        consumer = consumer(group, 100);
        consumer.subscribe(List.of(topic));
        for (int i = 0; i < 5; i++) {
            send(producer, topic, 0, "m" + i, "m" + i);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        consumer.close(Duration.ofSeconds(5));
        producer.close();
        try (Connection db = pool.getConnection(); var statement = db.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + effects);
        }
        pool.close();
        store.close();
    }

    private KafkaRecordProcessor.Builder<String, String, String> processor() {
        return KafkaRecordProcessor.builder(consumer, (DedupStore) store, ResultCodec.utf8())
                .inbox(pool, connection -> {
                    view[0] = store.inTransaction(connection);
                    return watched;
                })
                .retryBackoff(Duration.ofMillis(100))
                .deadLetters(deadLetters::add);
    }

    /** The effect: one row through the batch's transaction. */
    private String write(ConsumerRecord<String, String> record, Connection transaction) throws SQLException {
        try (PreparedStatement insert = transaction.prepareStatement("INSERT INTO " + effects + " (id) VALUES (?)")) {
            insert.setString(1, record.value());
            insert.executeUpdate();
        }
        return "done " + record.value();
    }

    /** The committed effect rows per id. */
    private Map<String, Integer> effectRows() throws SQLException {
        Map<String, Integer> rows = new HashMap<>();
        try (Connection db = pool.getConnection(); var statement = db.createStatement();
                ResultSet result = statement.executeQuery("SELECT id, count(*) FROM " + effects + " GROUP BY id")) {
            while (result.next()) {
                rows.put(result.getString(1), result.getInt(2));
            }
        }
        return rows;
    }

    private PollResult<String, String, String> firstBatch(KafkaRecordProcessor<String, String, String> processor,
            InboxHandler<String, String, String> handler) {
        for (int i = 0; i < 100; i++) {
            PollResult<String, String, String> result = processor.poll(Duration.ofMillis(500), handler);
            if (!result.outcomes().isEmpty()) {
                return result;
            }
        }
        throw new AssertionError("no records within 100 polls");
    }

    private void drainTo(KafkaRecordProcessor<String, String, String> processor, long offset,
            InboxHandler<String, String, String> handler) throws Exception {
        for (int i = 0; i < 200; i++) {
            processor.poll(Duration.ofMillis(200), handler);
            if (committed(group, topic).getOrDefault(0, -1L) >= offset) {
                return;
            }
        }
        throw new AssertionError("offset " + offset + " not committed within 200 polls");
    }

    @Test
    @DisplayName("claims, effects and settle in one transaction per partition batch: each effect once, a republish"
            + " replays the stored result, the offsets committed")
    void oneTransactionPerBatch() throws Exception {
        var processor = processor().build();

        drainTo(processor, 5, this::write);
        send(producer, topic, 0, "m3", "m3-again");
        var again = firstBatch(processor, this::write);

        assertThat(effectRows()).isEqualTo(Map.of("m0", 1, "m1", 1, "m2", 1, "m3", 1, "m4", 1));
        assertThat(again.outcomes()).singleElement().satisfies(outcome -> assertThat(outcome.outcome())
                .isEqualTo(new ProcessingOutcome.AlreadyProcessed<>("m3", java.util.Optional.of("done m3"))));
        assertThat(committed(group, topic)).isEqualTo(Map.of(0, 6L));
        assertThat(watched.calls("claimAll")).as("one claimAll per batch").isEqualTo(2);
        assertThat(watched.calls("settleAll")).as("one settle for the batch that ran").isEqualTo(1);
        assertThat(watched.calls("extend")).as("no heartbeats in a transaction").isZero();
        assertThatThrownBy(() -> processor.poll(Duration.ofMillis(10), record -> "not in a transaction"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("InboxHandler");
    }

    @Test
    @DisplayName("a retryable handler failure rolls the batch back, then the records run one per transaction: the"
            + " ones before it commit, it is retried later and takes effect once, no key is left held")
    void handlerFailureRollsTheBatchBack() throws Exception {
        AtomicInteger failuresOfM2 = new AtomicInteger();
        var processor = processor().build();
        InboxHandler<String, String, String> failingM2Once = (record, transaction) -> {
            String done = write(record, transaction);     // written, then the failure: the row must not stay
            if (record.value().equals("m2") && failuresOfM2.getAndIncrement() < 2) {
                throw new IllegalArgumentException("temporary");
            }
            return done;
        };

        var result = firstBatch(processor, failingM2Once);

        assertThat(result.outcomes()).extracting(RecordOutcome::disposition).containsExactly(
                RecordOutcome.Disposition.DONE, RecordOutcome.Disposition.DONE, RecordOutcome.Disposition.REDELIVER);
        assertThat(effectRows()).isEqualTo(Map.of("m0", 1, "m1", 1));
        assertThat(store.inspect("m2")).as("m2's key, freed with its transaction").isEmpty();
        assertThat(store.inspect("m3")).as("m3's key, freed with the batch").isEmpty();
        assertThat(committed(group, topic)).isEqualTo(Map.of(0, 2L));
        assertThat(result.rewound()).isEqualTo(Map.of(new TopicPartition(topic, 0), 2L));

        drainTo(processor, 5, failingM2Once);
        assertThat(effectRows()).isEqualTo(Map.of("m0", 1, "m1", 1, "m2", 1, "m3", 1, "m4", 1));
        assertThat(failuresOfM2).hasValue(3);
    }

    @Test
    @DisplayName("a transaction the database aborted (a failed statement the handler caught) is rolled back whole:"
            + " no effect, no key held, nothing committed; the redelivery runs each record once")
    void abortedTransactionLeavesNothing() throws Exception {
        AtomicInteger sabotaged = new AtomicInteger();
        var processor = processor().build();
        InboxHandler<String, String, String> swallowingM4 = (record, transaction) -> {
            String done = write(record, transaction);
            if (record.value().equals("m4") && sabotaged.getAndIncrement() == 0) {
                try (var statement = transaction.createStatement()) {
                    statement.execute("SELECT 1 / 0");
                } catch (SQLException swallowed) {
                    // A handler bug: the statement failed, so PostgreSQL aborted the whole transaction, and the
                    // batch's settle fails in it.
                }
            }
            return done;
        };

        var result = firstBatch(processor, swallowingM4);

        assertThat(result.outcomes()).singleElement().satisfies(outcome -> {
            assertThat(outcome.disposition()).isEqualTo(RecordOutcome.Disposition.REDELIVER);
            assertThat(outcome.record().value()).isEqualTo("m0");
        });
        assertThat(effectRows()).isEmpty();
        for (int i = 0; i < 5; i++) {
            assertThat(store.inspect("m" + i)).as("key m%d", i).isEmpty();
        }
        assertThat(committed(group, topic)).isEmpty();

        drainTo(processor, 5, swallowingM4);
        assertThat(effectRows()).isEqualTo(Map.of("m0", 1, "m1", 1, "m2", 1, "m3", 1, "m4", 1));
    }

    @Test
    @DisplayName("a kept failure: stored as failed without the handler's writes, dead-lettered, committed past; the"
            + " records after it take effect once")
    void keptFailureIsStoredWithoutItsWrites() throws Exception {
        var processor = processor().keepKeyOn(e -> e instanceof IllegalStateException).build();
        InboxHandler<String, String, String> rejectingM1 = (record, transaction) -> {
            String done = write(record, transaction);
            if (record.value().equals("m1")) {
                throw new IllegalStateException("declined");
            }
            return done;
        };

        drainTo(processor, 5, rejectingM1);

        assertThat(effectRows()).isEqualTo(Map.of("m0", 1, "m2", 1, "m3", 1, "m4", 1));
        assertThat(deadLetters).extracting(DeadLetter::reason).containsExactly(DeadLetter.Reason.FAILED);
        assertThat(store.inspect("m1")).hasValueSatisfying(record -> assertThat(record.state())
                .isEqualTo(RecordState.FAILED));
    }
}
