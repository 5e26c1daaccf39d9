package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.endOffsets;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.kafka.ChaosConsumerMain.Slot;
import dev.dedup.tck.chaos.ChaosBoard;
import dev.dedup.tck.chaos.ConsumerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A consumer process dies mid-batch without committing; another member of the group finishes: each record once. */
class CrashOnKafkaTest {

    @Test
    @DisplayName("a consumer process halted mid-batch, before its 6th effect: the next member of the group takes the"
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
        Path dir = Files.createTempDirectory("kafka-crash-");
        List<String> arguments = new ArrayList<>(List.of("mode=POSTGRES", "topic=" + topic, "group=" + group,
                "table=" + table, "namespace=kafka-crash-" + unique(), "redis=unused:0", "seed=1", "halt=0",
                "haltAfterCompletion=0",
                // Longer than the group's session: the next member meets the dead one's claims, and waits them out.
                "leaseMillis=5000"));
        try (Connection db = KafkaTestSupport.postgres(); Admin admin = KafkaTestSupport.admin()) {
            ChaosOnKafkaTest.createTables(db, table);
            ChaosOnKafkaTest.shortSessions(admin, group);
            try {
                List<String> haltAtSixth = new ArrayList<>(arguments);
                haltAtSixth.add("haltBeforeDelivery=6");
                ConsumerProcess first = ConsumerProcess.start("first", ChaosConsumerMain.class,
                        dir.resolve("first.board"), Slot.COUNT, dir.resolve("first.log"), haltAtSixth);
                for (int i = 0; i < 600 && first.isAlive(); i++) {
                    Thread.sleep(100);
                }
                assertThat(first.isAlive()).as("the first consumer halted; see " + dir).isFalse();
                ChaosBoard firstFigures = first.board();
                assertThat(firstFigures.get(Slot.HALT_BEFORE_EFFECT.ordinal())).isEqualTo(1);
                assertThat(firstFigures.get(Slot.PROCESSED.ordinal())).isEqualTo(5);
                assertThat(committed(group, topic)).as("the halted consumer committed nothing").isEmpty();

                ConsumerProcess second = ConsumerProcess.start("second", ChaosConsumerMain.class,
                        dir.resolve("second.board"), Slot.COUNT, dir.resolve("second.log"), arguments);
                Map<Integer, Long> end = endOffsets(topic, 2);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!committed(group, topic).equals(end) && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                second.kill();

                ChaosBoard figures = second.board();
                assertThat(figures.get(Slot.ERRORS.ordinal())).as("errors; %s", ConsumerProcess.firstError(dir.resolve("second.log"))).isZero();
                assertThat(committed(group, topic)).isEqualTo(end);
                assertThat(applied(db, table)).hasSize(20).allSatisfy((id, count) -> assertThat(count).isEqualTo(1));
                assertThat(figures.get(Slot.ALREADY_PROCESSED.ordinal())).as("completed by the first consumer")
                        .isEqualTo(5);
                assertThat(figures.get(Slot.PROCESSED.ordinal())).isEqualTo(15);
                assertThat(figures.get(Slot.IN_PROGRESS_ELSEWHERE.ordinal()))
                        .as("the dead consumer's claims, until they lapsed").isPositive();
            } finally {
                try (var statement = db.createStatement()) {
                    statement.execute("DROP TABLE IF EXISTS " + table + "_applied, " + table + "_log");
                }
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
