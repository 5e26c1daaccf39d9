package dev.dedup.kafka;

import static dev.dedup.kafka.KafkaTestSupport.committed;
import static dev.dedup.kafka.KafkaTestSupport.consumer;
import static dev.dedup.kafka.KafkaTestSupport.createTopic;
import static dev.dedup.kafka.KafkaTestSupport.producer;
import static dev.dedup.kafka.KafkaTestSupport.send;
import static dev.dedup.kafka.KafkaTestSupport.unique;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.kafka.example.ReservePollLoop;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The examples of docs/kafka.md run on the real broker, and the page shows exactly their compiled source. */
class ExampleOnKafkaTest {
    private static final Pattern FENCE = Pattern.compile("(?ms)^```java\\n(.*?)^```$");
    private static final Pattern REGION = Pattern.compile("(?ms)^[ \\t]*// kafka-doc:([\\w-]+)\\n(.*?)^[ \\t]*// end$");

    @Test
    @DisplayName("the documented poll loop reserves once per message id and dead-letters an unknown SKU")
    void pollLoopRuns() throws Exception {
        String topic = createTopic("reservations", 1);
        try (Admin admin = KafkaTestSupport.admin()) {
            admin.createTopics(List.of(new NewTopic(topic + ".DLT", 1, (short) 1))).all().get();
        }
        List<String> reserved = new CopyOnWriteArrayList<>();
        String group = "example-" + unique();
        try (DedupStore store = KafkaTestSupport.postgresStore("kafka-example-" + unique());
                KafkaProducer<String, String> producer = producer();
                KafkaConsumer<String, String> consumer = consumer(group, 100)) {
            send(producer, topic, 0, "order-1", "sku-1 x 2");
            send(producer, topic, 0, "order-1", "sku-1 x 2");
            send(producer, topic, 0, "order-2", "sku-404 x 1");
            send(producer, topic, 0, "order-3", "sku-3 x 1");
            var loop = new ReservePollLoop(consumer, producer, store, order -> {
                if (order.startsWith("sku-404")) {
                    throw new ReservePollLoop.UnknownSkuException("sku-404");
                }
                reserved.add(order);
            }, topic);
            Thread thread = new Thread(loop, "poll-loop");
            thread.start();
            for (int i = 0; i < 300 && !committed(group, topic).equals(Map.of(0, 4L)); i++) {
                Thread.sleep(100);
            }
            loop.stop();
            thread.join(10_000);

            assertThat(committed(group, topic)).isEqualTo(Map.of(0, 4L));
            assertThat(reserved).containsExactly("sku-1 x 2", "sku-3 x 1");
        }
    }

    @Test
    @DisplayName("the documented inbox writes each reservation once, in the transaction of its claim")
    void inboxRuns() throws Exception {
        String topic = createTopic("reservations-inbox", 1);
        String group = "example-inbox-" + unique();
        String table = "kafka_example_" + unique();
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(KafkaTestSupport.postgresJdbcUrl());
        config.setMaximumPoolSize(1);
        try (var pool = new com.zaxxer.hikari.HikariDataSource(config);
                var store = (dev.dedup.store.postgres.PostgresDedupStore) KafkaTestSupport
                        .postgresStore("kafka-example-" + unique());
                KafkaProducer<String, String> producer = producer();
                KafkaConsumer<String, String> consumer = consumer(group, 100)) {
            try (var db = pool.getConnection(); var statement = db.createStatement()) {
                statement.execute("CREATE TABLE " + table + " (orders text)");
            }
            send(producer, topic, 0, "order-1", "sku-1 x 2");
            send(producer, topic, 0, "order-1", "sku-1 x 2");
            send(producer, topic, 0, "order-3", "sku-3 x 1");
            consumer.subscribe(List.of(topic));
            var inbox = new dev.dedup.kafka.example.ReserveInbox(consumer, producer, store, pool, table);
            for (int i = 0; i < 100 && !committed(group, topic).equals(Map.of(0, 3L)); i++) {
                inbox.pollOnce();
            }

            List<String> rows = new ArrayList<>();
            try (var db = pool.getConnection(); var statement = db.createStatement();
                    var result = statement.executeQuery("SELECT orders FROM " + table + " ORDER BY orders")) {
                while (result.next()) {
                    rows.add(result.getString(1));
                }
                statement.execute("DROP TABLE " + table);
            }
            assertThat(rows).containsExactly("sku-1 x 2", "sku-3 x 1");
            assertThat(committed(group, topic)).isEqualTo(Map.of(0, 3L));
            assertThat(dev.dedup.kafka.example.ReserveInbox.batched(consumer, producer, store)).isNotNull();
        }
    }

    @Test
    @DisplayName("every Java block of docs/kafka.md is a region of the compiled example, and every region is shown")
    void docShowsTheCompiledExample() throws IOException {
        Path root = Path.of("..");
        String doc = Files.readString(root.resolve("docs/kafka.md"));
        String source = Files.readString(Path.of("src/test/java/dev/dedup/kafka/example/ReservePollLoop.java"))
                + Files.readString(Path.of("src/test/java/dev/dedup/kafka/example/TransformPipeline.java"))
                + Files.readString(Path.of("src/test/java/dev/dedup/kafka/example/ReserveInbox.java"))
                + Files.readString(Path.of("src/test/java/dev/dedup/kafka/spring/KafkaListenerOnKafkaTest.java"))
                + Files.readString(Path.of("src/test/java/dev/dedup/kafka/spring/BatchListenerOnKafkaTest.java"));
        List<String> blocks = new ArrayList<>();
        Matcher fence = FENCE.matcher(doc);
        while (fence.find()) {
            blocks.add(fence.group(1).stripTrailing());
        }
        List<String> regions = new ArrayList<>();
        Matcher region = REGION.matcher(source);
        while (region.find()) {
            regions.add(region.group(2).stripTrailing().stripIndent());
        }
        assertThat(regions).isNotEmpty();
        assertThat(regions).as("regions shown in docs/kafka.md").allSatisfy(r -> assertThat(blocks).contains(r));
        assertThat(blocks).as("Java blocks of docs/kafka.md").allSatisfy(b -> assertThat(regions).contains(b));
    }
}
