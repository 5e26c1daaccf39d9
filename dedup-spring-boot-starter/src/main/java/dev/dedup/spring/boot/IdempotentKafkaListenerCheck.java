package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Refuses to start listener containers that would lose records of {@link Idempotent} {@code @KafkaListener}
 * methods: when the application has such a method, every listener container must use an
 * {@link IdempotentKafkaErrorHandler}. Runs before the containers start (an earlier lifecycle phase), so no record is
 * consumed under the wrong handler.
 */
public final class IdempotentKafkaListenerCheck implements SmartLifecycle, BeanFactoryAware {
    private final ObjectProvider<KafkaListenerEndpointRegistry> registry;
    private final boolean enabled;
    private ConfigurableListableBeanFactory beans;
    private volatile boolean running;

    IdempotentKafkaListenerCheck(ObjectProvider<KafkaListenerEndpointRegistry> registry, boolean enabled) {
        this.registry = registry;
        this.enabled = enabled;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beans = beanFactory instanceof ConfigurableListableBeanFactory listable ? listable : null;
    }

    @Override
    public void start() {
        running = true;
        KafkaListenerEndpointRegistry containers = registry.getIfAvailable();
        if (!enabled || containers == null || beans == null) {
            return;
        }
        List<String> listeners = idempotentListenerMethods();
        if (listeners.isEmpty()) {
            return;
        }
        for (MessageListenerContainer container : containers.getAllListenerContainers()) {
            if (!(container instanceof AbstractMessageListenerContainer<?, ?> checked)) {
                continue;
            }
            CommonErrorHandler handler = checked.getCommonErrorHandler();
            boolean transactional = checked.getContainerProperties().getKafkaAwareTransactionManager() != null;
            if (transactional && !(checked.getAfterRollbackProcessor()
                    instanceof IdempotentKafkaAfterRollbackProcessor)) {
                throw new DedupConfigurationException("the Kafka listener container '" + container.getListenerId()
                        + "' runs in transactions with the after-rollback processor "
                        + checked.getAfterRollbackProcessor().getClass().getName() + ", which skips a record after a"
                        + " few retries: a record of an @Idempotent listener (" + String.join(", ", listeners)
                        + ") whose key another consumer holds would never take effect. Give its container factory an"
                        + " IdempotentKafkaAfterRollbackProcessor, or remove your AfterRollbackProcessor bean to get"
                        + " the starter's; dedup.kafka.require-error-handler=false turns this check off");
            }
            if (transactional && !synchronizes(checked.getContainerProperties().getKafkaAwareTransactionManager())) {
                throw new DedupConfigurationException("the Kafka listener container '" + container.getListenerId()
                        + "' runs in transactions whose manager does no transaction synchronization"
                        + " (SYNCHRONIZATION_NEVER, KafkaTransactionManager's default): an @Idempotent listener ("
                        + String.join(", ", listeners) + ") could not store its result after the commit, nor free"
                        + " its key on a rollback. Turn it on: kafkaTransactionManager.setTransactionSynchronization("
                        + "AbstractPlatformTransactionManager.SYNCHRONIZATION_ALWAYS)");
            }
            if (!transactional && !(handler instanceof IdempotentKafkaErrorHandler)) {
                throw new DedupConfigurationException("the Kafka listener container '" + container.getListenerId()
                        + "' uses " + (handler == null ? "Spring Kafka's default error handler"
                                : handler.getClass().getName()) + ", which retries a record a few times and then"
                        + " commits past it: a record of an @Idempotent listener (" + String.join(", ", listeners)
                        + ") whose key another consumer holds would never take effect. Give its container factory an"
                        + " IdempotentKafkaErrorHandler (new IdempotentKafkaErrorHandler(recoverer, backOff,"
                        + " Duration.ofSeconds(1))), or remove your CommonErrorHandler bean to get the starter's;"
                        + " dedup.kafka.require-error-handler=false turns this check off (for containers that serve"
                        + " no @Idempotent listener, such as @RetryableTopic's)");
            }
        }
    }

    /** A manager that is not Spring's abstract one is trusted to synchronize: there is no setting to read. */
    private static boolean synchronizes(Object transactionManager) {
        return !(transactionManager instanceof AbstractPlatformTransactionManager manager)
                || manager.getTransactionSynchronization() != AbstractPlatformTransactionManager.SYNCHRONIZATION_NEVER;
    }

    /** The {@code @KafkaListener} methods that are also {@link Idempotent}, by bean class and name. */
    private List<String> idempotentListenerMethods() {
        List<String> found = new ArrayList<>();
        for (String name : beans.getBeanDefinitionNames()) {
            try {
                Class<?> type = beans.getType(name, false);
                if (type != null) {
                    Class<?> target = ClassUtils.getUserClass(type);
                    ReflectionUtils.doWithMethods(target, method -> found.add(target.getSimpleName() + "."
                            + method.getName()), IdempotentKafkaListenerCheck::isIdempotentListener);
                }
            } catch (RuntimeException | LinkageError e) {
                // A bean whose class cannot be introspected (an optional dependency missing) has no listener.
            }
        }
        return found;
    }

    private static boolean isIdempotentListener(Method method) {
        return AnnotatedElementUtils.hasAnnotation(method, Idempotent.class)
                && AnnotatedElementUtils.hasAnnotation(method, KafkaListener.class);
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** {@return a phase before the listener containers'} */
    @Override
    public int getPhase() {
        return AbstractMessageListenerContainer.DEFAULT_PHASE - 1;
    }
}
