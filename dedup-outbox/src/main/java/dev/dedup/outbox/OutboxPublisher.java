package dev.dedup.outbox;

import java.util.List;

/**
 * Publishes a batch of outbox events to a broker: the relay's only dependency on the broker. Implementations for
 * Kafka ({@link dev.dedup.outbox.kafka.KafkaOutboxPublisher}) and RabbitMQ
 * ({@link dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher}) come with this module.
 *
 * <p>The contract the relay relies on:
 * <ul>
 *   <li>return only once the broker has confirmed every event of the batch (Kafka: acknowledged by all in-sync
 *       replicas; RabbitMQ: a publisher confirm);</li>
 *   <li>otherwise throw {@link OutboxPublishException} naming the events that were confirmed; the others stay
 *       unpublished and are offered again in a later batch (any other exception counts as none confirmed);</li>
 *   <li>name among them, as {@linkplain OutboxPublishException#rejected() rejected}, only the events that failed
 *       for a reason of their own (too large, a missing topic or exchange, unroutable, not authorised): the relay
 *       counts an attempt for each and parks it after its limit. An outage (broker unreachable, a timeout of the
 *       whole batch) rejects nothing, or it would park healthy events;</li>
 *   <li>send each event with its {@link OutboxEvent#messageId()} as the {@code message-id} header or property;</li>
 *   <li>keep the batch's order for events with the same key, and never confirm an event after an earlier one of
 *       the same key failed.</li>
 * </ul>
 */
public interface OutboxPublisher {
    /**
     * Publishes {@code events}, in order, and waits for the broker's confirmation of each.
     *
     * @param events the batch, in outbox order; never empty
     * @throws OutboxPublishException when some events were not confirmed
     */
    void publish(List<OutboxEvent> events);
}
