package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import org.springframework.aop.Advisor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes {@link Idempotent} methods idempotent, when Jackson is on the class path (results are stored as JSON: Jackson
 * 3 on Spring Boot 4, Jackson 2 on Spring Boot 3) and the application has a {@link DedupStore};
 * {@code dedup.annotation.enabled=false} turns it off. The interception
 * runs outside {@code @Transactional} (order {@code dedup.annotation.order}, default 0), so a result is stored only
 * after the method's transaction committed, and a rolled-back call frees its key.
 */
@AutoConfiguration(after = DedupStoreAutoConfiguration.class, afterName = BootClasses.JACKSON_AUTO_CONFIGURATION)
@ConditionalOnClass(name = BootClasses.JSON_MAPPER)
@ConditionalOnBean(DedupStore.class)
@ConditionalOnProperty(prefix = "dedup.annotation", name = "enabled", matchIfMissing = true)
@Import(DedupAnnotationAutoConfiguration.AutoProxying.class)
public class DedupAnnotationAutoConfiguration {
    /** Creates the auto-configuration; Spring calls it. */
    public DedupAnnotationAutoConfiguration() {}

    /**
     * The advisor that applies the interception to {@link Idempotent} methods. Static and lazy in what it uses:
     * advisors are built before other beans, and must not pull the store or the JSON mapper forward.
     *
     * @param environment where {@code dedup.annotation.order} is read
     * @param store the application's store, resolved at the first call
     * @param beans where the application's JSON mapper is found at the first call; a default one if it has none
     * @param properties the lease and retention defaults, resolved at the first call
     * @return the advisor
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static Advisor idempotentMethodAdvisor(Environment environment, ObjectProvider<DedupStore> store,
            BeanFactory beans, ObjectProvider<DedupProperties> properties) {
        var interceptor = new IdempotentMethodInterceptor(store::getObject,
                JacksonResultJson.of(beans), properties::getObject);
        var advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, Idempotent.class, true),
                interceptor);
        advisor.setOrder(environment.getProperty("dedup.annotation.order", Integer.class, 0));
        return advisor;
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
