package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * A {@link DedupStore} bean, unless the application defines one: opened from {@code dedup.store.uri} when it is
 * set; else built on the application's {@code DataSource} when {@code dedup-store-postgres} is on the class path;
 * else on its Lettuce {@code RedisClient} when {@code dedup-store-redis} is. The order of the imports is the order
 * of preference.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"})
@EnableConfigurationProperties(DedupProperties.class)
@Import({UriStoreConfiguration.class, PostgresStoreConfiguration.class, RedisStoreConfiguration.class})
public class DedupStoreAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupStoreAutoConfiguration() {}
}
