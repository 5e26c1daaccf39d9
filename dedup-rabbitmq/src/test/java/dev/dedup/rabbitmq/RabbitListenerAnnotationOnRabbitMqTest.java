package dev.dedup.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.rabbitmq.spring.IdempotentMessageListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The documented {@code @RabbitListener} use, in a Spring context with {@code @EnableRabbit} (no Spring Boot): a
 * listener method with manual acks that passes the message and channel to {@link IdempotentMessageListener}.
 */
@Timeout(60)
class RabbitListenerAnnotationOnRabbitMqTest {
    /** The application's listener bean: the five-line wrapper the docs describe. */
    static class Orders {
        private final IdempotentMessageListener dedup;

        Orders(IdempotentMessageListener dedup) {
            this.dedup = dedup;
        }

        @RabbitListener(queues = "#{@ordersQueue}", ackMode = "MANUAL")
        public void onOrder(Message message, Channel channel) throws Exception {
            dedup.onMessage(message, channel);
        }
    }

    @Configuration
    @EnableRabbit
    static class Wiring {
        @Bean
        CachingConnectionFactory connectionFactory() {
            return new CachingConnectionFactory(RabbitTestBroker.factory());
        }

        @Bean
        SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory(CachingConnectionFactory connections) {
            SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
            factory.setConnectionFactory(connections);
            return factory;
        }

        @Bean
        Orders orders(IdempotentMessageListener dedup) {
            return new Orders(dedup);
        }
    }

    @Test
    void aRabbitListenerMethodRunsEachKeyOnceAndAcksEveryCopy() throws Exception {
        List<String> handled = new CopyOnWriteArrayList<>();
        try (RabbitFixture rabbit = new RabbitFixture(Duration.ofMillis(300));
                InMemoryDedupStore store = new InMemoryDedupStore("spring-annotation");
                IdempotentMessageListener dedup = new IdempotentMessageListener(channel ->
                        IdempotentDeliverCallback.builder(channel, rabbit.queues, store, delivery -> {
                            handled.add(delivery.getProperties().getMessageId());
                            return null;
                        }).build())) {
            AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
            context.registerBean("ordersQueue", String.class, () -> rabbit.queues.queue());
            context.registerBean(IdempotentMessageListener.class, () -> dedup);
            context.register(Wiring.class);
            context.refresh();
            try {
                rabbit.publish("order-1", "a");
                rabbit.publish("order-1", "a");
                rabbit.publish("order-2", "b");

                Await.until("both keys handled and the queue drained", () -> handled.size() >= 2
                        && ready(rabbit, rabbit.queues.queue()) == 0);
                Thread.sleep(300);   // a wrongly re-run duplicate would show up by now
            } finally {
                context.close();     // stops the container: an unacked message would go back to the queue
            }
            assertThat(handled).containsExactlyInAnyOrder("order-1", "order-2");
            assertThat(rabbit.ready(rabbit.queues.queue())).as("every copy acked").isZero();
            assertThat(rabbit.ready(rabbit.queues.deadLetterQueue())).isZero();
        }
    }

    private static long ready(RabbitFixture rabbit, String queue) {
        try {
            return rabbit.ready(queue);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
