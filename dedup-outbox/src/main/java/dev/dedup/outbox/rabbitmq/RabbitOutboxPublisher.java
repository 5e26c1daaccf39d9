package dev.dedup.outbox.rabbitmq;

import com.rabbitmq.client.AMQP;
import dev.dedup.outbox.OutboxEvent;
import dev.dedup.outbox.OutboxPublishException;
import dev.dedup.outbox.OutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import dev.dedup.rabbitmq.PublishException;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Publishes outbox events to RabbitMQ through a {@link ConfirmedPublisher}: each event to the exchange named by its
 * destination ({@code ""}, the default exchange, routes by queue name), with its key as the routing key, persistent,
 * its headers as AMQP headers and its id as the {@code message-id} property, which
 * {@code dev.dedup.rabbitmq.IdempotentDeliverCallback} keys on by default. Events are published one after the other,
 * each waiting for its confirm, so a key's events keep their order; the first failure ends the batch.
 */
public final class RabbitOutboxPublisher implements OutboxPublisher {
    /** AMQP delivery mode 2: the broker writes the message to disk before it confirms it on a durable queue. */
    private static final int PERSISTENT = 2;

    private final ConfirmedPublisher publisher;

    /**
     * Publishes through {@code publisher}, which the caller opens and closes.
     *
     * @param publisher a publisher in confirm mode
     */
    public RabbitOutboxPublisher(ConfirmedPublisher publisher) {
        this.publisher = Objects.requireNonNull(publisher, "publisher");
    }

    @Override
    public void publish(List<OutboxEvent> events) {
        Set<String> confirmed = new LinkedHashSet<>();
        for (OutboxEvent event : events) {
            try {
                publisher.publish(event.destination(), event.key() == null ? "" : event.key(), properties(event),
                        event.payload());
                confirmed.add(event.messageId());
            } catch (PublishException e) {
                throw new OutboxPublishException("RabbitMQ did not confirm " + (events.size() - confirmed.size())
                        + " of " + events.size() + " events: " + e.getMessage(), confirmed, e);
            }
        }
    }

    private static AMQP.BasicProperties properties(OutboxEvent event) {
        Map<String, Object> headers = new HashMap<>(event.headers());
        return new AMQP.BasicProperties.Builder().messageId(event.messageId()).deliveryMode(PERSISTENT)
                .headers(headers).build();
    }
}
