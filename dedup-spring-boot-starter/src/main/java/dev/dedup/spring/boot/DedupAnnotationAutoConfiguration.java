package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.springframework.aop.Advisor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes {@link Idempotent} methods idempotent, when Jackson is on the class path (results are stored as JSON: Jackson
 * 3 on Spring Boot 4, Jackson 2 on Spring Boot 3) and
 * the application has a {@link DedupStore}; {@code dedup.annotation.enabled=false} turns it off. The interception
 * runs outside {@code @Transactional} (order {@code dedup.annotation.order}, default 0), so a result is stored only
 * after the method's transaction committed, and a rolled-back call frees its key; with
 * {@code inTransaction = true} it runs inside the transaction instead, innermost on the bean.
 */
@AutoConfiguration(after = DedupStoreAutoConfiguration.class,
        afterName = BootClasses.JACKSON_AUTO_CONFIGURATION)
@ConditionalOnClass(name = BootClasses.JSON_MAPPER)
@ConditionalOnBean(DedupStore.class)
@ConditionalOnProperty(prefix = "dedup.annotation", name = "enabled", matchIfMissing = true)
@Import({DedupAnnotationAutoConfiguration.AutoProxying.class, DedupAnnotationAutoConfiguration.Metrics.class})
public class DedupAnnotationAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupAnnotationAutoConfiguration() {}

    /**
     * The advisor that applies the interception to {@link Idempotent} methods that store their result after the
     * transaction (the default). Static and lazy in what it uses:
     * advisors are built before other beans, and must not pull the store or the JSON mapper forward.
     *
     * @param environment where {@code dedup.annotation.order} is read
     * @param store the application's store, resolved at the first call
     * @param beans where the application's JSON mapper is found at the first call; a default one if it has none
     * @param properties the lease and retention defaults, resolved at the first call
     * @param listener told of replays and calls without a key, resolved at the first call
     * @return the advisor
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static Advisor idempotentMethodAdvisor(Environment environment, ObjectProvider<DedupStore> store,
            BeanFactory beans, ObjectProvider<DedupProperties> properties,
            ObjectProvider<IdempotentCallListener> listener) {
        var advisor = new DefaultPointcutAdvisor(new IdempotentMethods(false),
                interceptor(store, beans, properties, listener));
        advisor.setOrder(environment.getProperty("dedup.annotation.order", Integer.class, 0));
        return advisor;
    }

    /**
     * Applies the interception to {@code @Idempotent(inTransaction = true)} methods innermost, after every advisor
     * already on the bean: the transaction's interceptor has begun the transaction when the claim is made, whatever
     * the orders, and Spring's own default order leaves no room below it.
     *
     * @param store the application's store, resolved at the first call
     * @param beans where the application's JSON mapper is found at the first call; a default one if it has none
     * @param properties the lease and retention defaults, resolved at the first call
     * @param listener told of replays and calls without a key, resolved at the first call
     * @return the post-processor that adds the advisor to each bean with such a method
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static BeanPostProcessor idempotentInTransactionAdvising(ObjectProvider<DedupStore> store,
            BeanFactory beans, ObjectProvider<DedupProperties> properties,
            ObjectProvider<IdempotentCallListener> listener) {
        return new InnermostAdvising(new DefaultPointcutAdvisor(new IdempotentMethods(true),
                interceptor(store, beans, properties, listener)));
    }

    private static IdempotentMethodInterceptor interceptor(ObjectProvider<DedupStore> store,
            BeanFactory beans, ObjectProvider<DedupProperties> properties,
            ObjectProvider<IdempotentCallListener> listener) {
        return new IdempotentMethodInterceptor(store::getObject, JacksonResultJson.of(beans), properties::getObject,
                () -> listener.getIfAvailable(() -> new IdempotentCallListener() {}));
    }

    /** Counts replays and calls without a key in Micrometer, unless the application has its own listener. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean(IdempotentCallListener.class)
        MeteredIdempotentCalls dedupIdempotentCalls(ObjectProvider<MeterRegistry> registry) {
            return new MeteredIdempotentCalls(registry);
        }
    }

    /**
     * The {@link Idempotent} methods of one mode: the annotation on the method, as called or as implemented by the
     * target class (where the proxy is called through an interface).
     */
    static final class IdempotentMethods extends StaticMethodMatcherPointcut {
        private final boolean inTransaction;

        IdempotentMethods(boolean inTransaction) {
            this.inTransaction = inTransaction;
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
            if (annotation == null && targetClass != null && !Proxy.isProxyClass(targetClass)) {
                annotation = AnnotatedElementUtils.findMergedAnnotation(
                        AopUtils.getMostSpecificMethod(method, targetClass), Idempotent.class);
            }
            return annotation != null && annotation.inTransaction() == inTransaction;
        }
    }

    /**
     * Adds its advisor last to a bean another post-processor already proxied (as Spring's method validation does),
     * so that it runs inside that proxy's other interceptors; proxies the other beans with it alone.
     */
    static final class InnermostAdvising extends AbstractBeanFactoryAwareAdvisingPostProcessor {
        private static final long serialVersionUID = 1L;

        InnermostAdvising(Advisor advisor) {
            this.advisor = advisor;
            setBeforeExistingAdvisors(false);
            setProxyTargetClass(true);   // as the starter's auto-proxy creator, so beans keep their class
        }
    }

    /**
     * Registers Spring's infrastructure auto-proxy creator unless the application has one already (with AspectJ,
     * Spring Boot registers a wider one), the way {@code @EnableTransactionManagement} does.
     */
    static final class AutoProxying implements ImportBeanDefinitionRegistrar {
        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
        }
    }
}
