package dev.dedup.outbox.rabbitmq;

import com.rabbitmq.client.AMQP;
import dev.dedup.outbox.OutboxEvent;
import dev.dedup.outbox.OutboxPublishException;
import dev.dedup.outbox.OutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Publishes outbox events to RabbitMQ through a {@link ConfirmedPublisher}: each event to the exchange named by its
 * destination ({@code ""}, the default exchange, routes by queue name), with its key as the routing key, persistent,
 * its headers as AMQP headers and its id as the {@code message-id} property, which
 * {@code dev.dedup.rabbitmq.IdempotentDeliverCallback} keys on by default.
 *
 * <p>A batch goes out in waves: a wave holds the first waiting event of each key (and every event without one), is
 * published without waiting between events, and its confirms are awaited together before the next wave. So a
 * batch of distinct keys costs one wait for confirms, not one per event, and an event is never published before the
 * previous event of its key was confirmed: a key's order holds even when a publish fails and is retried. After a
 * wave with a failure, the batch ends; the confirmed events are reported.
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
        List<OutboxEvent> waiting = events;
        while (!waiting.isEmpty()) {
            List<OutboxEvent> wave = new ArrayList<>();
            List<OutboxEvent> later = new ArrayList<>();
            Set<String> keysInWave = new HashSet<>();
            for (OutboxEvent event : waiting) {
                (event.key() == null || keysInWave.add(event.key()) ? wave : later).add(event);
            }
            List<CompletableFuture<String>> sent = new ArrayList<>(wave.size());
            for (OutboxEvent event : wave) {
                sent.add(publisher.publishAsync(event.destination(), event.key() == null ? "" : event.key(),
                        properties(event), event.payload()));
            }
            Exception failure = null;
            for (int i = 0; i < wave.size(); i++) {
                try {
                    sent.get(i).get();
                    confirmed.add(wave.get(i).messageId());
                } catch (ExecutionException e) {
                    failure = failure == null ? (Exception) e.getCause() : failure;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    failure = failure == null ? e : failure;
                    break;
                }
            }
            if (failure != null) {
                throw new OutboxPublishException("RabbitMQ did not confirm " + (events.size() - confirmed.size())
                        + " of " + events.size() + " events: " + failure.getMessage(), confirmed, failure);
            }
            waiting = later;
        }
    }

    private static AMQP.BasicProperties properties(OutboxEvent event) {
        Map<String, Object> headers = new HashMap<>(event.headers());
        return new AMQP.BasicProperties.Builder().messageId(event.messageId()).deliveryMode(PERSISTENT)
                .headers(headers).build();
    }
}
