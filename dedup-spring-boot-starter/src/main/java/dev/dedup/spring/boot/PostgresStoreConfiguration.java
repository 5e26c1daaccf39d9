package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import dev.dedup.store.postgres.PostgresDedupStore;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The PostgreSQL store on the application's {@code DataSource}; the pool stays the application's. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({PostgresDedupStore.class, DataSource.class})
class PostgresStoreConfiguration {

    @Bean
    @ConditionalOnMissingBean(DedupStore.class)
    @ConditionalOnSingleCandidate(DataSource.class)
    DedupStore dedupStore(DataSource dataSource, DedupProperties properties) {
        PostgresDedupStore.Builder builder = PostgresDedupStore.builder(dataSource)
                .createSchema(properties.getStore().isCreateSchema());
        if (properties.getNamespace() != null) {
            builder.namespace(properties.getNamespace());
        }
        StoreTimeout.applyTo(properties, builder::timeout);
        return builder.build();
    }
}
