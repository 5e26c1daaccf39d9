package dev.dedup.rabbitmq;

import com.rabbitmq.client.Delivery;
import java.util.function.Function;

/** Key functions for {@link dev.dedup.IdempotentConsumer}s of RabbitMQ deliveries. */
public final class RabbitKeys {
    private RabbitKeys() {}

    /**
     * The {@code message-id} property, which the publisher sets once and every redelivery and re-publish keeps. It
     * does not catch a producer that publishes one business event twice under two ids: key on a business field
     * ({@link dev.dedup.DedupKeys#of}) for that.
     *
     * @return a function that throws {@link MissingMessageIdException} for a delivery without a message id
     */
    public static Function<Delivery, String> messageId() {
        return RabbitKeys::requireMessageId;
    }

    private static String requireMessageId(Delivery delivery) {
        String id = delivery.getProperties() == null ? null : delivery.getProperties().getMessageId();
        if (id == null || id.isBlank()) {
            throw new MissingMessageIdException("delivery " + delivery.getEnvelope().getDeliveryTag()
                    + " from exchange '" + delivery.getEnvelope().getExchange() + "' with routing key '"
                    + delivery.getEnvelope().getRoutingKey() + "' has no message-id property, so it cannot be"
                    + " deduplicated; it is dead-lettered unprocessed");
        }
        return id;
    }
}
