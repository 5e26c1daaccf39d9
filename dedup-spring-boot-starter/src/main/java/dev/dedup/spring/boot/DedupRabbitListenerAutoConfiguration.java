package dev.dedup.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.aopalliance.aop.Advice;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Adds {@link IdempotentRabbitListenerAdvice} to every RabbitMQ listener container factory bean (Spring Boot's
 * {@code rabbitListenerContainerFactory} and the application's own), when Spring AMQP is on the class path, so an
 * {@link Idempotent} {@code @RabbitListener} method's kept failures and reused keys are dead-lettered, not requeued
 * in a loop, and a key another call holds is requeued after a wait. {@code dedup.annotation.rabbit.enabled=false}
 * turns it off; an {@link IdempotentRabbitListenerAdvice} bean of the application's replaces the default one (which
 * waits up to 1 s on a held key).
 */
@AutoConfiguration
@ConditionalOnClass(AbstractRabbitListenerContainerFactory.class)
@ConditionalOnProperty(prefix = "dedup.annotation.rabbit", name = "enabled", matchIfMissing = true)
public class DedupRabbitListenerAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupRabbitListenerAutoConfiguration() {}

    /**
     * The advice, waiting up to 1 s on a key another call holds.
     *
     * @return the advice
     */
    @Bean
    @ConditionalOnMissingBean
    public IdempotentRabbitListenerAdvice idempotentRabbitListenerAdvice() {
        return new IdempotentRabbitListenerAdvice(Duration.ofSeconds(1));
    }

    /**
     * Appends the advice to each container factory's advice chain as the factory is built, after what Spring Boot
     * put there (its retry interceptor, when {@code spring.rabbitmq.listener.*.retry.enabled}): the advice is the
     * innermost, nearest the listener. Static, and lazy in the advice, as post-processors must be.
     *
     * @param advice the advice bean
     * @return the post-processor
     */
    @Bean
    public static BeanPostProcessor idempotentRabbitListenerFactories(
            ObjectProvider<IdempotentRabbitListenerAdvice> advice) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (bean instanceof AbstractRabbitListenerContainerFactory<?> factory) {
                    List<Advice> chain = factory.getAdviceChain() == null ? new ArrayList<>()
                            : new ArrayList<>(Arrays.asList(factory.getAdviceChain()));
                    if (chain.stream().noneMatch(IdempotentRabbitListenerAdvice.class::isInstance)) {
                        chain.add(advice.getObject());
                        factory.setAdviceChain(chain.toArray(Advice[]::new));
                    }
                }
                return bean;
            }
        };
    }
}
