package dev.dedup.spring.boot;

/**
 * Where Spring Boot 4 keeps the classes the auto-configurations are ordered and conditioned on. Boot 4 moved them
 * into modules and packages of their own; the Spring Boot 3 starter has its own copy of this class, with Boot 3's.
 */
final class BootClasses {
    static final String DATA_SOURCE_AUTO_CONFIGURATION =
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration";
    static final String REDIS_AUTO_CONFIGURATION =
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration";
    static final String MONGO_AUTO_CONFIGURATION = "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration";
    static final String MONGO_REACTIVE_AUTO_CONFIGURATION =
            "org.springframework.boot.mongodb.autoconfigure.MongoReactiveAutoConfiguration";
    static final String KAFKA_AUTO_CONFIGURATION = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration";
    static final String JACKSON_AUTO_CONFIGURATION =
            "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration";
    /** Jackson 3's mapper: {@link Idempotent} stores results with it. */
    static final String JSON_MAPPER = "tools.jackson.databind.json.JsonMapper";
    static final String HEALTH_INDICATOR = "org.springframework.boot.health.contributor.HealthIndicator";

    private BootClasses() {}
}
