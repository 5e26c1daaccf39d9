package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The store's health indicator ({@code dedup} under {@code /actuator/health}) when Spring Boot's health support is
 * on the class path; {@code management.health.dedup.enabled=false} turns it off.
 */
@AutoConfiguration(after = DedupStoreAutoConfiguration.class)
@ConditionalOnClass(name = BootClasses.HEALTH_INDICATOR)
@ConditionalOnBean(DedupStore.class)
@ConditionalOnProperty(prefix = "management.health.dedup", name = "enabled", matchIfMissing = true)
public class DedupHealthAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupHealthAutoConfiguration() {}

    /**
     * The store's health indicator.
     *
     * @param store the application's store
     * @param properties the settings: the check waits at most {@code dedup.store.timeout} (default 5 s)
     * @return the indicator, named {@code dedup} in the health report
     */
    @Bean
    @ConditionalOnMissingBean(name = "dedupHealthIndicator")
    public DedupStoreHealthIndicator dedupHealthIndicator(DedupStore store,
            ObjectProvider<DedupProperties> properties) {
        Duration wait = StoreTimeout.healthWait(properties.getIfAvailable(DedupProperties::new));
        return new DedupStoreHealthIndicator(store, wait);
    }
}
