package dev.dedup.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.rabbitmq.spring.IdempotentMessageListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * The Spring AMQP listener in a {@link SimpleMessageListenerContainer} with manual acks, on the real broker: the
 * same settlements as the plain callback, through Spring's channels and message properties.
 */
@Timeout(60)
class IdempotentMessageListenerOnRabbitMqTest {
    private RabbitFixture rabbit;
    private InMemoryDedupStore store;
    private CachingConnectionFactory connections;
    private SimpleMessageListenerContainer container;
    private IdempotentMessageListener listener;
    private final List<String> handled = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        rabbit = new RabbitFixture(Duration.ofMillis(300));
        store = new InMemoryDedupStore("spring");
        connections = new CachingConnectionFactory(RabbitTestBroker.factory());
    }

    @AfterEach
    void tearDown() throws Exception {
        if (container != null) {
            container.stop();
        }
        if (listener != null) {
            listener.close();
        }
        connections.destroy();
        rabbit.close();
        store.close();
    }

    /** Two consumers in the container, as a {@code @RabbitListener} with concurrency 2 would have. */
    private void listen(MessageHandler<Delivery, Void> handler) {
        listener = new IdempotentMessageListener(channel ->
                IdempotentDeliverCallback.builder(channel, rabbit.queues, store, handler).maxAttempts(2).build());
        container = new SimpleMessageListenerContainer(connections);
        container.setQueueNames(rabbit.queues.queue());
        container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        container.setConcurrentConsumers(2);
        container.setMessageListener(entryPoint(listener));
        container.start();
    }

    /** What the container calls: the listener itself here, a mutant around it in {@link EntryPointMutantsTest}. */
    ChannelAwareMessageListener entryPoint(IdempotentMessageListener listener) {
        return listener;
    }

    private MessageHandler<Delivery, Void> recording() {
        return delivery -> {
            handled.add(delivery.getProperties().getMessageId());
            return null;
        };
    }

    @Test
    void aDuplicatePublishRunsTheHandlerOnceAndEveryCopyIsAcked() throws Exception {
        listen(recording());
        rabbit.publish("order-1", "a");
        rabbit.publish("order-2", "b");
        rabbit.publish("order-1", "a");

        Await.until("both keys handled and the queue drained", () -> handled.size() >= 2
                && ready(rabbit.queues.queue()) == 0);
        Thread.sleep(300);   // a wrongly re-run duplicate would show up by now
        container.stop();    // an unacked message would go back to the queue now
        assertThat(handled).containsExactlyInAnyOrder("order-1", "order-2");
        assertThat(rabbit.ready(rabbit.queues.queue())).as("all three copies acked").isZero();
        assertThat(rabbit.ready(rabbit.queues.retryQueue())).isZero();
        assertThat(rabbit.ready(rabbit.queues.deadLetterQueue())).isZero();
    }

    @Test
    void aFailingHandlerIsParkedThenDeadLetteredAfterMaxAttempts() throws Exception {
        listen(delivery -> {
            handled.add(delivery.getProperties().getMessageId());
            throw new IllegalStateException("the warehouse is down");
        });
        rabbit.publish("order-3", "c");

        Await.until("dead-lettered", () -> ready(rabbit.queues.deadLetterQueue()) == 1);
        // Attempt 1 parked the message (it came back after the retry delay), attempt 2 reached maxAttempts.
        assertThat(handled).containsExactly("order-3", "order-3");
        GetResponse dead = rabbit.takeDeadLetter();
        assertThat(dead.getProps().getMessageId()).isEqualTo("order-3");
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("c");
    }

    @Test
    void aParkedCopyKeepsTheOriginalsDeliveryModeAndUserId() throws Exception {
        rabbit.close();
        rabbit = new RabbitFixture(Duration.ofMinutes(1));     // parked copies stay in the retry queue, to be read
        listen(delivery -> {
            throw new IllegalStateException("the warehouse is down");
        });
        String user = RabbitTestBroker.factory().getUsername();
        publish("persistent", new AMQP.BasicProperties.Builder().deliveryMode(2).userId(user));
        publish("transient", new AMQP.BasicProperties.Builder().deliveryMode(1));

        Await.until("both parked", () -> ready(rabbit.queues.retryQueue()) == 2);
        Map<String, AMQP.BasicProperties> parked = new HashMap<>();
        for (int i = 0; i < 2; i++) {
            GetResponse copy = rabbit.channel.basicGet(rabbit.queues.retryQueue(), true);
            parked.put(copy.getProps().getMessageId(), copy.getProps());
        }
        // A transient copy of a persistent message would be lost if the broker restarted while it waits.
        assertThat(parked.get("persistent").getDeliveryMode()).as("the parked copy of a persistent message: its"
                + " delivery mode").isEqualTo(2);
        assertThat(parked.get("persistent").getUserId()).isEqualTo(user);
        assertThat(parked.get("transient").getDeliveryMode()).isEqualTo(1);
    }

    private void publish(String messageId, AMQP.BasicProperties.Builder properties) {
        rabbit.publisher.publish("", rabbit.queues.queue(), properties.messageId(messageId).build(),
                messageId.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aMessageWithoutMessageIdIsDeadLetteredUnprocessed() throws Exception {
        listen(recording());
        rabbit.publisher.publish("", rabbit.queues.queue(), new AMQP.BasicProperties.Builder().build(),
                "no id".getBytes(StandardCharsets.UTF_8));
        // ConfirmedPublisher sets a UUID message-id when none is given: publish the bare message on a plain channel.
        rabbit.channel.basicPublish("", rabbit.queues.queue(), new AMQP.BasicProperties.Builder().build(),
                "bare".getBytes(StandardCharsets.UTF_8));

        Await.until("the bare message dead-lettered", () -> ready(rabbit.queues.deadLetterQueue()) == 1);
        Await.until("the one with an id handled", () -> handled.size() == 1);
        assertThat(new String(rabbit.takeDeadLetter().getBody(), StandardCharsets.UTF_8)).isEqualTo("bare");
    }

    @Test
    void aReusedMessageIdWithAnotherPayloadIsDeadLetteredUnprocessed() throws Exception {
        IdempotentConsumer<Delivery, Void> consumer = IdempotentConsumer
                .builder(store, RabbitKeys.messageId(), ResultCodec.none())
                .fingerprint(delivery -> delivery.getBody().clone()).build();
        listener = new IdempotentMessageListener(channel ->
                IdempotentDeliverCallback.builder(channel, rabbit.queues, consumer, recording()).build());
        container = new SimpleMessageListenerContainer(connections);
        container.setQueueNames(rabbit.queues.queue());
        container.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        container.setMessageListener(listener);
        container.start();
        rabbit.publish("order-4", "reserve 1");
        Await.until("handled", () -> handled.size() == 1);

        rabbit.publish("order-4", "reserve 1");      // a replay: acked, not run
        rabbit.publish("order-4", "reserve 80");     // another message under the same id

        Await.until("the reused id dead-lettered", () -> ready(rabbit.queues.deadLetterQueue()) == 1);
        Await.until("the queue drained", () -> ready(rabbit.queues.queue()) == 0);
        assertThat(handled).containsExactly("order-4");
        assertThat(new String(rabbit.takeDeadLetter().getBody(), StandardCharsets.UTF_8)).isEqualTo("reserve 80");
        assertThat(rabbit.ready(rabbit.queues.retryQueue())).isZero();
    }

    private long ready(String queue) {
        try {
            return rabbit.ready(queue);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
