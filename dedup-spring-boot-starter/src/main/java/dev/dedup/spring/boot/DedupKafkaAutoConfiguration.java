package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.AfterRollbackProcessor;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;

/**
 * {@link Idempotent} on {@code @KafkaListener} methods: Spring Kafka's default error handler retries a failed record
 * nine times at once and then commits past it, which loses a record whose key another consumer holds. This sets
 * {@link IdempotentKafkaErrorHandler} on Boot's listener container factory, unless the application has its own
 * {@code CommonErrorHandler}; and refuses to start when a listener container would serve {@code @Idempotent}
 * listener methods with another error handler ({@code dedup.kafka.require-error-handler=false} turns the check off).
 */
@AutoConfiguration(after = DedupAnnotationAutoConfiguration.class,
        beforeName = BootClasses.KAFKA_AUTO_CONFIGURATION)
@ConditionalOnClass({DefaultErrorHandler.class, KafkaListenerEndpointRegistry.class})
@ConditionalOnBean(DedupStore.class)
@ConditionalOnProperty(prefix = "dedup.annotation", name = "enabled", matchIfMissing = true)
public class DedupKafkaAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupKafkaAutoConfiguration() {}

    /**
     * The error handler Boot sets on its listener container factory.
     *
     * @return the handler that retries a held key and recovers only final failures
     */
    @Bean
    @ConditionalOnMissingBean(CommonErrorHandler.class)
    public IdempotentKafkaErrorHandler idempotentKafkaErrorHandler() {
        return new IdempotentKafkaErrorHandler();
    }

    /**
     * The after-rollback processor Boot sets on its listener container factory, for containers in Kafka
     * transactions.
     *
     * @return the processor that retries a held key and recovers only final failures
     */
    @Bean
    @ConditionalOnMissingBean(AfterRollbackProcessor.class)
    public IdempotentKafkaAfterRollbackProcessor idempotentKafkaAfterRollbackProcessor() {
        return new IdempotentKafkaAfterRollbackProcessor();
    }

    /**
     * Checks, before the listener containers start, that each one serving an {@link Idempotent} method has an
     * {@link IdempotentKafkaErrorHandler}.
     *
     * @param registry the listener containers
     * @param environment where {@code dedup.kafka.require-error-handler} is read
     * @return the check
     */
    @Bean
    public static IdempotentKafkaListenerCheck idempotentKafkaListenerCheck(
            ObjectProvider<KafkaListenerEndpointRegistry> registry, Environment environment) {
        return new IdempotentKafkaListenerCheck(registry,
                environment.getProperty("dedup.kafka.require-error-handler", Boolean.class, true));
    }
}
