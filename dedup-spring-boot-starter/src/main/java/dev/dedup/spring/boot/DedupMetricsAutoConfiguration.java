package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import dev.dedup.micrometer.MeteredDedupStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Meters every {@link DedupStore} bean, the starter's or the application's, with dedup-micrometer's
 * {@link MeteredDedupStore} ({@code dedup.claims}, {@code dedup.store.calls}, and an observation per store call when
 * the application has an {@link ObservationRegistry}), when that module and a {@link MeterRegistry} bean are present;
 * {@code dedup.metrics.enabled=false} turns it off.
 */
@AutoConfiguration
@ConditionalOnClass({MeteredDedupStore.class, MeterRegistry.class})
@ConditionalOnProperty(prefix = "dedup.metrics", name = "enabled", matchIfMissing = true)
public class DedupMetricsAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupMetricsAutoConfiguration() {}

    /**
     * Wraps each store bean as it is built. Static, and lazy in the registries, as post-processors must be.
     *
     * @param meters the application's meter registry, if it has exactly one
     * @param observations the application's observation registry, if any
     * @return the post-processor
     */
    @Bean
    public static BeanPostProcessor meteredDedupStores(ObjectProvider<MeterRegistry> meters,
            ObjectProvider<ObservationRegistry> observations) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (!(bean instanceof DedupStore store) || bean instanceof MeteredDedupStore) {
                    return bean;
                }
                MeterRegistry registry = meters.getIfUnique();
                if (registry == null) {
                    return bean;
                }
                return MeteredDedupStore.wrap(store, registry,
                        observations.getIfUnique(() -> ObservationRegistry.NOOP));
            }
        };
    }
}
