package dev.dedup.kafka.spring;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.kafka.RecordKeys;
import dev.dedup.tck.TestServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The real broker and stores the Spring Kafka tests run on: a one-partition topic of the test's own, its
 * {@code <topic>-dlt} (Spring Kafka's default dead-letter topic), a consumer group of its own, and a producer.
 */
final class SpringKafkaFixture implements AutoCloseable {
    final String topic;
    final String deadLetterTopic;
    final String group;
    final String bootstrap;
    private final KafkaProducer<String, String> producer;

    SpringKafkaFixture(String prefix) throws Exception {
        this.bootstrap = TestServers.require("Kafka 4.1 (KRaft)", "DEDUP_TEST_KAFKA_BOOTSTRAP", null);
        this.topic = prefix + "-" + unique();
        this.deadLetterTopic = topic + "-dlt";
        this.group = prefix + "-group-" + unique();
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1), new NewTopic(deadLetterTopic, 1, (short) 1)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        this.producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    /** The PostgreSQL or Redis store, on a namespace of its own. */
    static DedupStore store(String kind) {
        String namespace = "spring-kafka-" + unique();
        return switch (kind) {
            case "postgres" -> DedupStores.open(TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null)
                    + "&table=kafka_claims&createSchema=true&namespace=" + namespace);
            case "redis" -> DedupStores.open(TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", null)
                    + "?namespace=" + namespace);
            default -> throw new IllegalArgumentException(kind);
        };
    }

    /** Publishes one record to partition 0 with a {@code message-id} header (none when {@code messageId} is null). */
    void send(String messageId, String value) throws Exception {
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, 0, null, value);
        if (messageId != null) {
            record.headers().add(RecordKeys.DEFAULT_HEADER, messageId.getBytes(StandardCharsets.UTF_8));
        }
        producer.send(record).get(30, TimeUnit.SECONDS);
    }

    /** The group's committed offset on partition 0, or -1 when nothing was committed. */
    long committed() throws Exception {
        try (Admin admin = admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            OffsetAndMetadata offset = offsets.get(new TopicPartition(topic, 0));
            return offset == null ? -1 : offset.offset();
        }
    }

    /** Every record of the dead-letter topic, read from the start for {@code duration}. */
    List<ConsumerRecord<String, String>> deadLetters(Duration duration) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<ConsumerRecord<String, String>> read = new ArrayList<>();
        try (KafkaConsumer<String, String> reader =
                new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition partition = new TopicPartition(deadLetterTopic, 0);
            reader.assign(List.of(partition));
            reader.seekToBeginning(List.of(partition));
            long end = System.nanoTime() + duration.toNanos();
            while (System.nanoTime() < end) {
                reader.poll(Duration.ofMillis(200)).forEach(read::add);
            }
        }
        return read;
    }

    static String header(ConsumerRecord<?, ?> record, String name) {
        var header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** Waits up to 30 s for {@code condition}, failing with {@code what} when it never holds. */
    static void await(String what, Check condition) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.holds()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(100);
        }
    }

    /** A condition that may throw, such as one that asks the broker. */
    interface Check {
        boolean holds() throws Exception;
    }

    /**
     * The {@code // kafka-doc:name} ... {@code // end} regions of a test of this package that are not a Java block of
     * docs/kafka.md, after checking the file has {@code expected} regions.
     */
    static List<String> docRegionsMissing(String testFile, int expected) throws IOException {
        String doc = Files.readString(Path.of("..", "docs", "kafka.md"));
        String source = Files.readString(Path.of("src/test/java/dev/dedup/kafka/spring", testFile));
        List<String> blocks = new ArrayList<>();
        Matcher fence = Pattern.compile("(?ms)^```java\\n(.*?)^```$").matcher(doc);
        while (fence.find()) {
            blocks.add(fence.group(1).stripTrailing());
        }
        List<String> regions = new ArrayList<>();
        Matcher region = Pattern.compile("(?ms)^[ \\t]*// kafka-doc:([\\w-]+)\\n(.*?)^[ \\t]*// end$").matcher(source);
        while (region.find()) {
            regions.add(region.group(2).stripTrailing().stripIndent());
        }
        if (regions.size() != expected) {
            throw new AssertionError(testFile + " has " + regions.size() + " kafka-doc regions, not " + expected);
        }
        regions.removeAll(blocks);
        return regions;
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    static String unique() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }
}
