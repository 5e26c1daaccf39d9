package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.endOffsets;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.kafka.CrashableConsumer.Point;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A consumer dies mid-batch without committing; another member of the group finishes: each record once. */
class CrashOnKafkaTest {

    @Test
    @DisplayName("a consumer halted mid-batch, closed without committing: the next member of the group takes the"
            + " records, skips the completed ones, waits out the dead one's leases, and applies each record once")
    void crashMidBatchThenAnotherConsumerFinishes() throws Exception {
        String topic = createTopic("crash", 2);
        String group = "crash-" + unique();
        String table = "kafka_crash_" + unique();
        try (KafkaProducer<String, String> producer = producer()) {
            for (int i = 0; i < 20; i++) {
                send(producer, topic, i % 2, "m" + i, "m" + i);
            }
        }
        var figures = new CrashableConsumer.Figures();
        try (DedupStore store = KafkaTestSupport.postgresStore("kafka-crash-" + unique());
                Connection db = KafkaTestSupport.postgres()) {
            CrashableConsumer.createTables(db, table);
            try {
                var first = new CrashableConsumer("first", group, topic, 20, store, table,
                        (point, handled) -> point == Point.BEFORE_EFFECT && handled == 5, figures).start();
                first.join();
                assertThat(figures.errors).isEmpty();
                assertThat(figures.halts(Point.BEFORE_EFFECT)).isEqualTo(1);
                assertThat(committed(group, topic)).as("the crashed consumer committed nothing").isEmpty();

                var second = new CrashableConsumer("second", group, topic, 20, store, table,
                        (point, handled) -> false, figures).start();
                Map<Integer, Long> end = endOffsets(topic, 2);
                for (int i = 0; i < 300 && !committed(group, topic).equals(end); i++) {
                    Thread.sleep(100);
                }
                second.stop();
                second.join();

                assertThat(figures.errors).isEmpty();
                assertThat(committed(group, topic)).isEqualTo(end);
                assertThat(applied(db, table)).hasSize(20).allSatisfy((id, count) -> assertThat(count).isEqualTo(1));
                assertThat(figures.outcomes("AlreadyProcessed")).as("completed by the first consumer").isEqualTo(5);
                // The first consumer reported nothing (it died inside its poll): these are the second's.
                assertThat(figures.outcomes("Processed")).isEqualTo(15);
                assertThat(figures.outcomes("InProgressElsewhere")).as("the dead consumer's claims, until they lapsed")
                        .isPositive();
                System.out.printf("crash mid-batch: %d deliveries, outcomes %s%n", figures.deliveries.sum(),
                        figures.outcomes);
            } finally {
                CrashableConsumer.dropTables(db, table);
            }
        }
    }

    static Map<String, Integer> applied(Connection db, String table) throws Exception {
        Map<String, Integer> applied = new HashMap<>();
        try (var statement = db.createStatement();
                ResultSet rows = statement.executeQuery("SELECT id, applied FROM " + table + "_applied")) {
            while (rows.next()) {
                applied.put(rows.getString(1), rows.getInt(2));
            }
        }
        return applied;
    }
}
