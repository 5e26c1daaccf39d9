package dev.dedup.rabbitmq.spring;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.Envelope;
import dev.dedup.rabbitmq.IdempotentDeliverCallback;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * A Spring AMQP listener with manual acks that settles every message exactly as {@link IdempotentDeliverCallback}
 * does, by handing it to one: ack, park in the retry queue, or dead-letter by the outcome. Use it as a
 * {@code SimpleMessageListenerContainer}'s listener with {@code AcknowledgeMode.MANUAL}, or call
 * {@link #onMessage(Message, Channel)} from a {@code @RabbitListener(ackMode = "MANUAL")} method that takes the
 * {@code Message} and the {@code Channel}:
 *
 * <pre>{@code
 * IdempotentMessageListener dedup = new IdempotentMessageListener(channel ->
 *         IdempotentDeliverCallback.builder(channel, queues, store, delivery -> {
 *             reserve(delivery.getBody());
 *             return null;
 *         }).build());
 *
 * @RabbitListener(queues = "orders", ackMode = "MANUAL")
 * void onOrder(Message message, Channel channel) throws Exception {
 *     dedup.onMessage(message, channel);
 * }
 * }</pre>
 *
 * <p>A callback is bound to the channel it acks on, and a container's consumers each have their own, replaced after
 * a connection failure: so this keeps one callback per channel, made on first use by the factory, and drops (and
 * closes) those of closed channels. The handler sees the message as the RabbitMQ client's {@link Delivery}, with the
 * properties it arrived with (its delivery mode and user id too, which Spring keeps apart), so keys
 * ({@code message-id}) and the attempt header work as on a plain channel, and a parked copy is as persistent as the
 * original.
 */
public final class IdempotentMessageListener implements ChannelAwareMessageListener, AutoCloseable {
    private final Function<? super Channel, ? extends IdempotentDeliverCallback<?>> callbacks;
    private final Map<Channel, IdempotentDeliverCallback<?>> byChannel = new ConcurrentHashMap<>();

    /**
     * Creates a listener that makes a callback per channel.
     *
     * @param callbacks builds the callback for a channel, for example
     *     {@code channel -> IdempotentDeliverCallback.builder(channel, queues, consumer, handler).build()}; called
     *     once per channel
     */
    public IdempotentMessageListener(Function<? super Channel, ? extends IdempotentDeliverCallback<?>> callbacks) {
        this.callbacks = Objects.requireNonNull(callbacks, "callbacks");
    }

    /**
     * Processes one message and settles it on {@code channel}; the container must not ack it as well (manual acks).
     *
     * @param message the message as the container received it
     * @param channel the channel it arrived on
     * @throws Exception when the settlement cannot be sent (the channel closed): the broker redelivers
     */
    @Override
    public void onMessage(Message message, Channel channel) throws Exception {
        callbackFor(channel).handle(message.getMessageProperties().getConsumerTag(), delivery(message));
    }

    private IdempotentDeliverCallback<?> callbackFor(Channel channel) {
        IdempotentDeliverCallback<?> callback = byChannel.get(channel);
        if (callback != null) {
            return callback;
        }
        // A new channel: usually one that replaced a closed one, whose callback (and its retry channel) can go.
        byChannel.entrySet().removeIf(entry -> {
            if (entry.getKey().isOpen()) {
                return false;
            }
            entry.getValue().close();
            return true;
        });
        return byChannel.computeIfAbsent(channel, callbacks);
    }

    private Delivery delivery(Message message) {
        MessageProperties received = message.getMessageProperties();
        Envelope envelope = new Envelope(received.getDeliveryTag(), Boolean.TRUE.equals(received.getRedelivered()),
                received.getReceivedExchange(), received.getReceivedRoutingKey());
        return new Delivery(envelope, ReceivedProperties.of(received), message.getBody());
    }

    /** Closes every callback's retry channel (not the container's channels). */
    @Override
    public void close() {
        byChannel.values().forEach(IdempotentDeliverCallback::close);
        byChannel.clear();
    }
}
