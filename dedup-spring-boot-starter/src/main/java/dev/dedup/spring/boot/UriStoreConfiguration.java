package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import java.util.Map;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The store opened from {@code dedup.store.uri}; a bad URI fails the start with the parser's own message. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "dedup.store", name = "uri")
class UriStoreConfiguration {

    @Bean
    @ConditionalOnMissingBean(DedupStore.class)
    DedupStore dedupStore(DedupProperties properties) {
        String namespace = properties.getNamespace();
        return namespace == null
                ? DedupStores.open(properties.getStore().getUri())
                : DedupStores.open(properties.getStore().getUri(), Map.of("namespace", namespace));
    }
}
