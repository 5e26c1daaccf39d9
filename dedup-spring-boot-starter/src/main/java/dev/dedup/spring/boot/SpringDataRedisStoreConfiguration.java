package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.store.redis.RedisDedupStore;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis store on Spring Data Redis's Lettuce connection factory: one connection of its own, with the store's
 * codec, opened from the factory's own client (standalone or Cluster), so host, password, TLS and timeouts are the
 * application's {@code spring.data.redis.*}. Jedis has no client the store can use.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedisDedupStore.class, LettuceConnectionFactory.class})
class SpringDataRedisStoreConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(DedupStore.class)
    @ConditionalOnSingleCandidate(RedisConnectionFactory.class)
    StatefulConnection<String, byte[]> dedupLettuceConnection(RedisConnectionFactory factory) {
        if (!(factory instanceof LettuceConnectionFactory lettuce)) {
            throw new DedupConfigurationException("the application's RedisConnectionFactory is a "
                    + factory.getClass().getSimpleName() + ", but the dedup Redis store needs Lettuce's; use"
                    + " spring-boot-starter-data-redis's default (Lettuce), or set dedup.store.uri=redis://...");
        }
        AbstractRedisClient client = lettuce.getNativeClient();
        if (client instanceof RedisClusterClient cluster) {
            return cluster.connect(RedisDedupStore.CODEC);
        }
        return ((RedisClient) client).connect(RedisDedupStore.CODEC);
    }

    @Bean
    @ConditionalOnMissingBean(DedupStore.class)
    @ConditionalOnSingleCandidate(RedisConnectionFactory.class)
    DedupStore dedupStore(@Qualifier("dedupLettuceConnection") StatefulConnection<String, byte[]> connection,
            DedupProperties properties) {
        @SuppressWarnings("unchecked")
        RedisDedupStore.Builder builder = connection instanceof StatefulRedisClusterConnection<?, ?> cluster
                ? RedisDedupStore.builder((StatefulRedisClusterConnection<String, byte[]>) cluster)
                : RedisDedupStore.builder((StatefulRedisConnection<String, byte[]>) connection);
        if (properties.getNamespace() != null) {
            builder.namespace(properties.getNamespace());
        }
        StoreTimeout.applyTo(properties, builder::timeout);
        return builder.build();
    }
}
