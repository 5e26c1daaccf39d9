package dev.dedup.spring.boot;

/**
 * Where Spring Boot 3 keeps the classes the auto-configurations are ordered and conditioned on (Boot 4 moved them:
 * dedup-spring-boot-starter's copy of this class has Boot 4's).
 */
final class BootClasses {
    static final String DATA_SOURCE_AUTO_CONFIGURATION =
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration";
    static final String REDIS_AUTO_CONFIGURATION =
            "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration";
    static final String MONGO_AUTO_CONFIGURATION = "org.springframework.boot.autoconfigure.mongo.MongoAutoConfiguration";
    static final String MONGO_REACTIVE_AUTO_CONFIGURATION =
            "org.springframework.boot.autoconfigure.mongo.MongoReactiveAutoConfiguration";
    static final String KAFKA_AUTO_CONFIGURATION = "org.springframework.boot.autoconfigure.kafka.KafkaAutoConfiguration";
    static final String JACKSON_AUTO_CONFIGURATION =
            "org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration";
    /** Jackson 2's mapper: {@link Idempotent} stores results with it. */
    static final String JSON_MAPPER = "com.fasterxml.jackson.databind.ObjectMapper";
    static final String HEALTH_INDICATOR = "org.springframework.boot.actuate.health.HealthIndicator";

    private BootClasses() {}
}
