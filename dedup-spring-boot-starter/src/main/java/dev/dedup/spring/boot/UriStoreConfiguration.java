package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store opened from {@code dedup.store.uri}; a bad URI fails the start with the parser's own message.
 * {@code dedup.namespace} and {@code dedup.store.timeout} win over the URI's parameters of the same name.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "dedup.store", name = "uri")
class UriStoreConfiguration {

    @Bean
    @ConditionalOnMissingBean(DedupStore.class)
    DedupStore dedupStore(DedupProperties properties) {
        String uri = properties.getStore().getUri();
        Map<String, String> parameters = new HashMap<>();
        if (properties.getNamespace() != null) {
            parameters.put("namespace", properties.getNamespace());
        }
        StoreTimeout.addTo(properties, uri, parameters);
        try {
            return DedupStores.open(uri, parameters);
        } catch (DedupConfigurationException e) {
            throw StoreTimeout.explained(properties, e);
        }
    }
}
