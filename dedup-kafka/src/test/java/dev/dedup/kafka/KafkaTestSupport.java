package dev.dedup.kafka;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.tck.TestServers;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.testcontainers.kafka.KafkaContainer;

/** The real Kafka broker and PostgreSQL server the tests run on, and small helpers around their clients. */
final class KafkaTestSupport {
    static final String VARIABLE = "DEDUP_TEST_KAFKA_BOOTSTRAP";
    /** Where scripts/test-servers.sh starts the broker unless told otherwise. */
    static final String HARNESS_DEFAULT = "127.0.0.1:19092";

    private static String bootstrap;

    private KafkaTestSupport() {}

    /**
     * The broker: from {@value #VARIABLE}, else the harness's broker on its default port if one answers there, else
     * a Testcontainers broker where Docker runs, else a failure under CI (a skip in an IDE).
     */
    static synchronized String bootstrap() {
        if (bootstrap == null) {
            String fromEnvironment = System.getenv(VARIABLE);
            if ((fromEnvironment == null || fromEnvironment.isBlank()) && answers(HARNESS_DEFAULT)) {
                bootstrap = HARNESS_DEFAULT;
            } else {
                bootstrap = TestServers.require("Kafka 4.1 (KRaft)", VARIABLE, KafkaTestSupport::startContainer);
            }
        }
        return bootstrap;
    }

    private static boolean answers(String servers) {
        Properties properties = new Properties();
        properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3_000);
        properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3_000);
        try (Admin admin = Admin.create(properties)) {
            admin.describeCluster().nodes().get(3, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String startContainer() {
        KafkaContainer container = new KafkaContainer("apache/kafka:4.1.1");
        container.start();
        return container.getBootstrapServers();
    }

    static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()));
    }

    /** A topic of its own for each test, so no test sees another's records or offsets. */
    static String createTopic(String prefix, int partitions) throws Exception {
        String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        return topic;
    }

    static KafkaProducer<String, String> producer() {
        return producer(Map.of());
    }

    /** A producer with acks=all and a 5 ms linger, and {@code overrides} on top. */
    static KafkaProducer<String, String> producer(Map<String, Object> overrides) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.putAll(overrides);
        return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    /** A consumer that never commits on its own, reading a new group from the start. */
    static KafkaConsumer<String, String> consumer(String group, int maxPollRecords) {
        return consumer(group, maxPollRecords, Map.of());
    }

    /** {@link #consumer(String, int)} with {@code overrides} on top. */
    static KafkaConsumer<String, String> consumer(String group, int maxPollRecords, Map<String, Object> overrides) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
        // The new group protocol: a member that joins or leaves moves only the partitions it takes or gives back.
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        config.putAll(overrides);
        return new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
    }

    /** Publishes one record with a {@code message-id} header (none when {@code messageId} is null) and waits. */
    static void send(KafkaProducer<String, String> producer, String topic, Integer partition, String messageId,
            String value) throws Exception {
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, partition, null, value);
        if (messageId != null) {
            record.headers().add(RecordKeys.DEFAULT_HEADER, messageId.getBytes(StandardCharsets.UTF_8));
        }
        producer.send(record).get(30, TimeUnit.SECONDS);
    }

    /** The group's committed offset per partition of {@code topic} (absent: nothing committed). */
    static Map<Integer, Long> committed(String group, String topic) throws Exception {
        try (Admin admin = admin()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            return offsets.entrySet().stream()
                    .filter(entry -> entry.getKey().topic().equals(topic) && entry.getValue() != null)
                    .collect(Collectors.toMap(entry -> entry.getKey().partition(), entry -> entry.getValue().offset()));
        }
    }

    /** The end offset of each partition of {@code topic}. */
    static Map<Integer, Long> endOffsets(String topic, int partitions) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        try (Admin admin = admin()) {
            return admin.listOffsets(request).all().get(30, TimeUnit.SECONDS).entrySet().stream()
                    .collect(Collectors.toMap(entry -> entry.getKey().partition(), entry -> entry.getValue().offset()));
        }
    }

    static String postgresJdbcUrl() {
        return TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);
    }

    /** The PostgreSQL store on a namespace of its own. */
    static DedupStore postgresStore(String namespace) {
        return DedupStores.open(postgresJdbcUrl() + "&table=kafka_claims&createSchema=true&namespace=" + namespace);
    }

    /** The test Redis, such as {@code redis://127.0.0.1:16379}. */
    static java.net.URI redisUrl() {
        return java.net.URI.create(TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", null));
    }

    /** The Redis store on a namespace of its own, reached at {@code host:port}. */
    static DedupStore redisStore(String host, int port, String namespace) {
        return DedupStores.open("redis://" + host + ":" + port + "?namespace=" + namespace);
    }

    static Connection postgres() throws SQLException {
        return DriverManager.getConnection(postgresJdbcUrl());
    }

    /** A short random name part for groups, namespaces and tables. */
    static String unique() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }

    static Duration seconds(long seconds) {
        return Duration.ofSeconds(seconds);
    }
}
