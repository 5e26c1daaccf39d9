package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.Filter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The {@link IdempotencyKeyFilter} on the paths of {@code dedup.http.paths}, in a servlet web application that has
 * a {@link DedupStore}; {@code dedup.http.enabled=false} turns it off.
 */
@AutoConfiguration(after = DedupStoreAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({Filter.class, ContentCachingResponseWrapper.class})
@ConditionalOnBean(DedupStore.class)
@ConditionalOnProperty(prefix = "dedup.http", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(DedupProperties.class)
public class DedupHttpAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupHttpAutoConfiguration() {}

    /**
     * The filter, registered for every URL: it picks the protected requests itself.
     *
     * @param store the application's store
     * @param properties the settings
     * @param outages the application's outage listener, if any
     * @return the filter's registration, at {@code dedup.http.filter-order}
     */
    @Bean
    @ConditionalOnMissingBean(name = "idempotencyKeyFilter")
    public FilterRegistrationBean<IdempotencyKeyFilter> idempotencyKeyFilter(DedupStore store,
            DedupProperties properties, ObjectProvider<StoreOutageListener> outages) {
        IdempotencyKeyFilter filter = new IdempotencyKeyFilter(store, properties,
                outages.getIfAvailable(() -> (passedThrough, failure) -> {}));
        FilterRegistrationBean<IdempotencyKeyFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName("idempotencyKeyFilter");
        registration.setOrder(properties.getHttp().getFilterOrder());
        return registration;
    }

    /** Counts store outages in Micrometer when it is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean(StoreOutageListener.class)
        MeteredStoreOutages dedupStoreOutages(ObjectProvider<MeterRegistry> registry) {
            return new MeteredStoreOutages(registry);
        }
    }
}
