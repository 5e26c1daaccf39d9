package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code dedup} actuator endpoint, when the actuator is on the class path and the endpoint is exposed. */
@AutoConfiguration(after = DedupStoreAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(DedupStore.class)
@ConditionalOnAvailableEndpoint(DedupEndpoint.class)
public class DedupEndpointAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupEndpointAutoConfiguration() {}

    /**
     * The endpoint.
     *
     * @param store the application's store
     * @return the endpoint on it
     */
    @Bean
    @ConditionalOnMissingBean
    public DedupEndpoint dedupEndpoint(DedupStore store) {
        return new DedupEndpoint(store);
    }
}
