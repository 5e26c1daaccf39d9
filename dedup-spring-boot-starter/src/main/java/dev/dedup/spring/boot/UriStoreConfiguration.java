package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store opened from {@code dedup.store.uri}; a bad URI fails the start with the parser's own message.
 * {@code dedup.namespace}, {@code dedup.store.timeout} and {@code dedup.store.create-schema=true} win over the URI's
 * parameters of the same name.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "dedup.store", name = "uri")
class UriStoreConfiguration {
    private static final Logger log = LoggerFactory.getLogger(UriStoreConfiguration.class);
    static final String CREATE_SCHEMA = "createSchema";

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
            if (properties.getStore().isCreateSchema()) {
                addCreateSchema(uri, parameters);
            }
            return DedupStores.open(uri, parameters);
        } catch (DedupConfigurationException e) {
            throw StoreTimeout.explained(properties, e);
        }
    }

    /** The property, as the URI's {@code createSchema}, for the stores that have a schema to create. */
    private static void addCreateSchema(String uri, Map<String, String> parameters) {
        if (DedupStores.parameters(uri).own(CREATE_SCHEMA).isPresent()) {
            parameters.put(CREATE_SCHEMA, "true");
        } else {
            log.info("dedup.store.create-schema=true: the store of this URI creates what it needs by itself (or"
                    + " takes no createSchema parameter); nothing to add");
        }
    }
}
