package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * A {@link DedupStore} bean, unless the application defines one: opened from {@code dedup.store.uri} when it is
 * set; else built on the application's {@code DataSource} when {@code dedup-store-postgres} is on the class path;
 * else on its Lettuce {@code RedisClient}, or Spring Data Redis's Lettuce connection factory, when
 * {@code dedup-store-redis} is; else on its {@code DynamoDbClient} or its {@code MongoClient} when that store module is.
 * The order of the imports is the order of preference.
 */
@AutoConfiguration(afterName = {BootClasses.DATA_SOURCE_AUTO_CONFIGURATION, BootClasses.REDIS_AUTO_CONFIGURATION,
        BootClasses.MONGO_AUTO_CONFIGURATION, BootClasses.MONGO_REACTIVE_AUTO_CONFIGURATION,
        "io.awspring.cloud.autoconfigure.dynamodb.DynamoDbAutoConfiguration"})
@EnableConfigurationProperties(DedupProperties.class)
@Import({UriStoreConfiguration.class, PostgresStoreConfiguration.class, RedisStoreConfiguration.class,
        SpringDataRedisStoreConfiguration.class, DynamoDbStoreConfiguration.class, MongoStoreConfiguration.class})
public class DedupStoreAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupStoreAutoConfiguration() {}
}
