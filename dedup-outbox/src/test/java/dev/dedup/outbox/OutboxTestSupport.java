package dev.dedup.outbox;

import com.rabbitmq.client.ConnectionFactory;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.tck.TestServers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The real servers the outbox tests run on, from the harness's variables ({@code scripts/test-servers.sh}): a
 * missing one fails the run under CI or {@code DEDUP_REQUIRE_SERVERS=true}, and skips the test in an IDE.
 */
final class OutboxTestSupport {
    static final String KAFKA = "DEDUP_TEST_KAFKA_BOOTSTRAP";
    static final String RABBITMQ = "DEDUP_TEST_RABBITMQ_URL";

    private OutboxTestSupport() {}

    static String kafkaBootstrap() {
        return TestServers.require("Kafka 4.1 (KRaft)", KAFKA, null);
    }

    static String rabbitUrl() {
        return TestServers.require("RabbitMQ", RABBITMQ, null);
    }

    /** A pool on PostgreSQL, for the tests that run there only. */
    static HikariDataSource pool(int size) {
        return TestDatabase.POSTGRESQL.pool(size);
    }

    static String unique(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafkaBootstrap()));
    }

    static String createTopic(String prefix, int partitions) throws Exception {
        String topic = unique(prefix).replace('_', '-');
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        return topic;
    }

    static Map<String, Object> producerConfig() {
        return Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafkaBootstrap(), ProducerConfig.LINGER_MS_CONFIG, 5);
    }

    static KafkaConsumer<String, byte[]> consumer(String group) {
        return consumer(group, ConsumerConfig.DEFAULT_MAX_POLL_RECORDS);
    }

    static KafkaConsumer<String, byte[]> consumer(String group, int maxPollRecords) {
        Properties config = new Properties();
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafkaBootstrap());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        return new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer());
    }

    /** Reads {@code topic} from the start until {@code expected} records arrived and then {@code quiet} passed. */
    static List<ConsumerRecord<String, byte[]>> readAll(String topic, int expected, Duration quiet) {
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = consumer(unique("reader"))) {
            consumer.subscribe(List.of(topic));
            long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long quietUntil = Long.MAX_VALUE;
            while (System.nanoTime() < limit && System.nanoTime() < quietUntil) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                if (records.size() >= expected && quietUntil == Long.MAX_VALUE) {
                    quietUntil = System.nanoTime() + quiet.toNanos();
                }
            }
        }
        return records;
    }

    static String header(ConsumerRecord<?, ?> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** A killed member's partitions go to the others after 1 s without its heartbeat, not the default 45 s. */
    static void shortSessions(Admin admin, String group) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "1000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("consumer.heartbeat.interval.ms", "250"),
                        AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
    }

    static ConnectionFactory rabbitFactory() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(rabbitUrl());
        factory.setConnectionTimeout(5_000);
        return factory;
    }
}
