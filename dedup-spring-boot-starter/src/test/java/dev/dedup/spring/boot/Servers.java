package dev.dedup.spring.boot;

import dev.dedup.tck.TestServers;
import java.util.UUID;

/** The real servers the tests run on, as the other modules find them. */
final class Servers {
    private Servers() {}

    /** {@return the PostgreSQL JDBC URL, such as {@code jdbc:postgresql://127.0.0.1:15432/dedup?user=postgres}} */
    static String postgresJdbcUrl() {
        return TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);
    }

    /** {@return the MariaDB JDBC URL, such as {@code jdbc:mariadb://127.0.0.1:13306/dedup?user=root}} */
    static String mariaDbJdbcUrl() {
        return TestServers.require("MariaDB 10.11", "DEDUP_TEST_MARIADB_URL", null);
    }

    /** {@return the Redis URL, such as {@code redis://127.0.0.1:16379}} */
    static String redisUrl() {
        return TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", null);
    }

    /** {@return the Kafka bootstrap servers, such as {@code 127.0.0.1:19092}} */
    static String kafkaBootstrap() {
        return TestServers.require("Kafka 4.1 (KRaft)", "DEDUP_TEST_KAFKA_BOOTSTRAP", null);
    }

    /** {@return the RabbitMQ URL, such as {@code amqp://guest:guest@127.0.0.1:5672}} */
    static String rabbitMqUrl() {
        return TestServers.require("RabbitMQ 3", "DEDUP_TEST_RABBITMQ_URL", null);
    }

    /** {@return the DynamoDB endpoint (dynalite, the harness's emulator), such as {@code http://127.0.0.1:18000}} */
    static String dynamoDbEndpoint() {
        return TestServers.require("DynamoDB (dynalite)", "DEDUP_TEST_DYNAMODB_URL", null);
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
