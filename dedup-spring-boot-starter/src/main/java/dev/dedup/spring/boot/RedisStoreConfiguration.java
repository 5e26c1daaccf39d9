package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import dev.dedup.store.redis.RedisDedupStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Redis store on the application's Lettuce {@code RedisClient} bean (standalone): one connection of its own with
 * the store's codec, closed after the store. Spring Data Redis's connection factory exposes no client, so an
 * application on it sets {@code dedup.store.uri} or defines its own store bean.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedisDedupStore.class, RedisClient.class})
class RedisStoreConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(DedupStore.class)
    @ConditionalOnSingleCandidate(RedisClient.class)
    StatefulRedisConnection<String, byte[]> dedupRedisConnection(RedisClient client) {
        return client.connect(RedisDedupStore.CODEC);
    }

    @Bean
    @ConditionalOnMissingBean(DedupStore.class)
    @ConditionalOnSingleCandidate(RedisClient.class)
    DedupStore dedupStore(@Qualifier("dedupRedisConnection") StatefulRedisConnection<String, byte[]> dedupRedisConnection,
            DedupProperties properties) {
        RedisDedupStore.Builder builder = RedisDedupStore.builder(dedupRedisConnection);
        if (properties.getNamespace() != null) {
            builder.namespace(properties.getNamespace());
        }
        StoreTimeout.applyTo(properties, builder::timeout);
        return builder.build();
    }
}
