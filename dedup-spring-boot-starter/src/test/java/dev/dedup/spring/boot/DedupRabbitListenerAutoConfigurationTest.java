package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Where the starter puts {@link IdempotentRabbitListenerAdvice}, and its escape hatches: Boot's listener container
 * factory gets it, a property turns it off, an advice bean of the application's replaces it, and without Spring AMQP
 * the starter does without. No broker: a container factory connects only when a container starts.
 */
class DedupRabbitListenerAutoConfigurationTest {
    private final ApplicationContextRunner context = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(RabbitAutoConfiguration.class, DedupRabbitListenerAutoConfiguration.class));

    @Test
    void bootsListenerContainerFactoryGetsTheAdvice() {
        context.run(app -> assertThat(adviceChain(app.getBean(SimpleRabbitListenerContainerFactory.class)))
                .singleElement().isSameAs(app.getBean(IdempotentRabbitListenerAdvice.class)));
    }

    @Test
    void aPropertyTurnsItOff() {
        context.withPropertyValues("dedup.annotation.rabbit.enabled=false").run(app -> {
            assertThat(app).doesNotHaveBean(IdempotentRabbitListenerAdvice.class);
            assertThat(adviceChain(app.getBean(SimpleRabbitListenerContainerFactory.class))).isEmpty();
        });
    }

    @Test
    void theApplicationsAdviceReplacesTheStartersOne() {
        IdempotentRabbitListenerAdvice own = new IdempotentRabbitListenerAdvice(Duration.ofSeconds(5));
        context.withBean(IdempotentRabbitListenerAdvice.class, () -> own).run(app ->
                assertThat(adviceChain(app.getBean(SimpleRabbitListenerContainerFactory.class))).containsExactly(own));
    }

    @Test
    void withoutSpringAmqpTheStarterDoesWithout() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DedupRabbitListenerAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(AbstractRabbitListenerContainerFactory.class))
                .run(app -> assertThat(app).hasNotFailed().doesNotHaveBean(IdempotentRabbitListenerAdvice.class));
    }

    /** The factory's advice chain, as its containers will get it. */
    private static Object[] adviceChain(AbstractRabbitListenerContainerFactory<?> factory) {
        return factory.getAdviceChain() == null ? new Object[0] : factory.getAdviceChain();
    }
}
