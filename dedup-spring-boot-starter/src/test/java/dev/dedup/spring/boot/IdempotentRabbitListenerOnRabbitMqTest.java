package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link Idempotent} on a {@code @RabbitListener} method, on the real broker and Redis: messages published again
 * under the same message id take effect once, and a listener failure is requeued by the container and takes effect
 * once.
 */
@SpringBootTest(classes = IdempotentRabbitListenerOnRabbitMqTest.App.class)
class IdempotentRabbitListenerOnRabbitMqTest {
    static final String QUEUE = Servers.unique("boot-listener");

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        registry.add("spring.rabbitmq.addresses", Servers::rabbitMqUrl);
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.store.uri", Servers::redisUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-rabbit"));
        registry.add("test.queue", () -> QUEUE);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Queue queue() {
            return new Queue(QUEUE, false, false, true);
        }

        @Bean
        Listener listener() {
            return new Listener();
        }
    }

    static class Listener {
        private final Shipments shipments = new Shipments();

        /** Through a method: the bean is a proxy, whose own fields are empty. */
        public Shipments shipments() {
            return shipments;
        }

        @RabbitListener(queues = "${test.queue}")
        @Idempotent(key = "#message.messageProperties.messageId")
        public void on(Message message) {
            shipments.ship(new String(message.getBody()));
        }
    }

    @Autowired
    RabbitTemplate rabbit;

    @Autowired
    Listener listener;

    @Test
    void messagesPublishedAgainTakeEffectOnceAndAFailedOneIsRequeued() throws Exception {
        send("id-a", "a");
        send("id-b", "b");
        send("id-a", "a");
        send("id-f", "fail-once");
        send("id-b", "b");
        send("id-f", "fail-once");
        send("id-end", "end");

        Shipments shipments = listener.shipments();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while ((shipments.effects("end") == 0 || shipments.effects("fail-once") == 0)
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }

        assertThat(shipments.effects("end")).as("the last message took effect").isEqualTo(1);
        assertThat(shipments.effects("a")).isEqualTo(1);
        assertThat(shipments.effects("b")).isEqualTo(1);
        assertThat(shipments.runs("a")).isEqualTo(1);
        assertThat(shipments.runs("b")).isEqualTo(1);
        assertThat(shipments.effects("fail-once")).isEqualTo(1);
        assertThat(shipments.runs("fail-once")).as("the failed first run, and its redelivery").isEqualTo(2);
    }

    private void send(String messageId, String body) {
        rabbit.convertAndSend("", QUEUE, body, message -> {
            message.getMessageProperties().setMessageId(messageId);
            return message;
        });
    }
}
