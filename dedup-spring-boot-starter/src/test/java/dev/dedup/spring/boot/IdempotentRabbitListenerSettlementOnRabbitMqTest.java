package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.ContainerCustomizer;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * How Boot's auto-configured container settles what an {@link Idempotent} {@code @RabbitListener} method did not
 * run, on the real broker and Redis, with Spring AMQP's defaults (requeue rejected messages): a kept failure or a
 * reused key goes to the queue's dead-letter exchange after one delivery, and a key held by a running call comes back
 * at a bounded rate until it is free.
 */
@SpringBootTest(classes = IdempotentRabbitListenerSettlementOnRabbitMqTest.App.class)
class IdempotentRabbitListenerSettlementOnRabbitMqTest {
    static final String QUEUE = Servers.unique("boot-settled");
    static final String DEAD = QUEUE + ".dead";
    /** Deliveries the container received, by message id: counted before the listener method runs. */
    static final Map<String, AtomicInteger> DELIVERIES = new ConcurrentHashMap<>();

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        registry.add("spring.rabbitmq.addresses", Servers::rabbitMqUrl);
        registry.add("spring.datasource.url", Servers::postgresJdbcUrl);
        registry.add("dedup.store.uri", Servers::redisUrl);
        registry.add("dedup.namespace", () -> Servers.unique("boot-settled"));
        registry.add("test.queue", () -> QUEUE);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Queue queue() {
            return new Queue(QUEUE, false, false, true,
                    Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", DEAD));
        }

        @Bean
        Queue deadLetters() {
            return new Queue(DEAD, false, false, false);
        }

        @Bean
        ContainerCustomizer<SimpleMessageListenerContainer> countDeliveries() {
            return container -> container.addAfterReceivePostProcessors(message -> {
                DELIVERIES.computeIfAbsent(message.getMessageProperties().getMessageId(), id -> new AtomicInteger())
                        .incrementAndGet();
                return message;
            });
        }

        @Bean
        Listener listener() {
            return new Listener();
        }
    }

    static class Listener {
        private final Shipments shipments = new Shipments();

        public Shipments shipments() {
            return shipments;
        }

        @RabbitListener(queues = "${test.queue}")
        @Idempotent(scope = "settled", key = "#message.messageProperties.messageId", fingerprint = "#message.body")
        public void on(Message message) {
            shipments.ship(new String(message.getBody(), StandardCharsets.UTF_8));
        }
    }

    @Autowired
    RabbitTemplate rabbit;

    @Autowired
    Listener listener;

    @Autowired
    DedupStore store;

    @AfterAll
    static void deleteDeadLetters(@Autowired AmqpAdmin admin) {
        admin.deleteQueue(DEAD);
    }

    @Test
    void aKeptFailureIsDeadLetteredAfterOneDelivery() throws Exception {
        Claim claim = (Claim) store.claim("settled:kept-1", Duration.ofSeconds(30));
        store.fail(claim, Duration.ofMinutes(5), null);

        send("kept-1", "order");

        Message dead = rabbit.receive(DEAD, 10_000);
        assertThat(dead).as("dead-lettered").isNotNull();
        assertThat(dead.getMessageProperties().getMessageId()).isEqualTo("kept-1");
        Thread.sleep(300);      // a requeued copy would be delivered again by now
        assertThat(deliveries("kept-1")).isEqualTo(1);
        assertThat(listener.shipments().runs("order")).isZero();
    }

    @Test
    void aReusedKeyIsDeadLetteredAfterOneDelivery() throws Exception {
        send("reused-1", "first order");
        await(() -> listener.shipments().effects("first order") == 1);

        send("reused-1", "another order");

        Message dead = rabbit.receive(DEAD, 10_000);
        assertThat(dead).as("dead-lettered").isNotNull();
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("another order");
        Thread.sleep(300);
        assertThat(deliveries("reused-1")).as("the first message, then the reused key once").isEqualTo(2);
        assertThat(listener.shipments().runs("another order")).isZero();
    }

    @Test
    void aHeldKeyComesBackAtABoundedRateAndRunsOnceFree() throws Exception {
        Claim holder = (Claim) store.claim("settled:held-1", Duration.ofSeconds(30));

        send("held-1", "held order");
        Thread.sleep(2_000);
        int whileHeld = deliveries("held-1");
        store.release(holder);

        assertThat(whileHeld).as("deliveries in 2 s while another call held the key").isBetween(1, 4);
        await(() -> listener.shipments().effects("held order") == 1);
        assertThat(listener.shipments().runs("held order")).isEqualTo(1);
        assertThat(rabbit.receive(DEAD, 500)).as("not dead-lettered").isNull();
    }

    private static int deliveries(String messageId) {
        AtomicInteger count = DELIVERIES.get(messageId);
        return count == null ? 0 : count.get();
    }

    private void send(String messageId, String body) {
        rabbit.convertAndSend("", QUEUE, body, message -> {
            message.getMessageProperties().setMessageId(messageId);
            return message;
        });
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("not within 10 s").isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
