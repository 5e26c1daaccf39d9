package dev.dedup.outbox;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * An event the relay hands to an {@link OutboxPublisher}: as appended, with its stable {@code messageId}.
 *
 * @param id the outbox row's id, increasing in append order
 * @param messageId the event's id, a UUID; publishers send it as the {@code message-id} header or property
 * @param destination where it goes: a Kafka topic, a RabbitMQ exchange
 * @param key the ordering key (Kafka record key, RabbitMQ routing key), or null
 * @param payload the message body
 * @param headers further headers, never containing {@code message-id}
 * @param createdAt when it was appended, by the database's clock
 */
public record OutboxEvent(long id, String messageId, String destination, String key, byte[] payload,
        Map<String, String> headers, Instant createdAt) {
    /** The header (Kafka) or property (RabbitMQ) that carries {@link #messageId()}. */
    public static final String MESSAGE_ID_HEADER = "message-id";

    /**
     * Checks and copies the fields.
     *
     * @param id the outbox row's id
     * @param messageId the event's id
     * @param destination where it goes
     * @param key the ordering key, or null
     * @param payload the message body
     * @param headers further headers
     * @param createdAt when it was appended
     */
    public OutboxEvent {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(payload, "payload");
        headers = Map.copyOf(headers);
        Objects.requireNonNull(createdAt, "createdAt");
    }

    @Override
    public String toString() {
        // No payload or header values: they may hold personal data, and the relay logs events.
        return "OutboxEvent[id=" + id + ", messageId=" + messageId + ", destination=" + destination + ", key=" + key
                + "]";
    }
}
