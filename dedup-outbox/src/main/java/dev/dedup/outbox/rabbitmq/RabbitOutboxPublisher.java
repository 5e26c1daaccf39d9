package dev.dedup.outbox.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ShutdownSignalException;
import dev.dedup.outbox.OutboxEvent;
import dev.dedup.outbox.OutboxPublishException;
import dev.dedup.outbox.OutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import dev.dedup.rabbitmq.PublishException;
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
 * wave with a failure, the batch ends; the confirmed events are reported. An event the broker closes the channel over
 * (a missing exchange) fails alone: the others of its wave are sent again on a new channel.
 *
 * <p>It reports as {@linkplain OutboxPublishException#rejected() rejected}, for the relay to count and eventually
 * park, an event the broker returned as unroutable, and one whose publish alone made the broker close the channel
 * (404: no such exchange; 403: access refused; 406: larger than the broker's maximum message size). Timeouts, nacks
 * and a lost connection are the broker's: they reject nothing.
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
        Map<String, String> rejected = new HashMap<>();
        List<OutboxEvent> waiting = events;
        while (!waiting.isEmpty()) {
            List<OutboxEvent> wave = new ArrayList<>();
            List<OutboxEvent> later = new ArrayList<>();
            Set<String> keysInWave = new HashSet<>();
            for (OutboxEvent event : waiting) {
                (event.key() == null || keysInWave.add(event.key()) ? wave : later).add(event);
            }
            Exception failure = publishWave(wave, confirmed, rejected);
            if (failure != null) {
                throw new OutboxPublishException("RabbitMQ did not confirm " + (events.size() - confirmed.size())
                        + " of " + events.size() + " events: " + failure.getMessage(), confirmed, rejected, failure);
            }
            waiting = later;
        }
    }

    /**
     * Publishes a wave, then awaits its confirms: adds the confirmed ids and the rejected ones, returns the first
     * failure or null.
     */
    private Exception publishWave(List<OutboxEvent> wave, Set<String> confirmed, Map<String, String> rejected) {
        List<CompletableFuture<String>> sent = new ArrayList<>(wave.size());
        for (OutboxEvent event : wave) {
            sent.add(send(event));
        }
        List<OutboxEvent> closedOut = new ArrayList<>();
        Exception failure = awaitConfirms(wave, sent, confirmed, rejected, closedOut);
        // The broker closes a channel over one event's error (404: no such exchange), and every publish sent after
        // it on that channel fails with it: so those go again, one at a time, on the new channel the publisher
        // opens, and only the event at fault fails. Each is its key's only event in the wave: order holds.
        for (int i = 0; i < closedOut.size() && !(failure instanceof InterruptedException); i++) {
            OutboxEvent event = closedOut.get(i);
            Exception error = awaitConfirms(List.of(event), List.of(send(event)), confirmed, rejected, null);
            failure = failure == null || error instanceof InterruptedException ? error : failure;
        }
        return failure;
    }

    private CompletableFuture<String> send(OutboxEvent event) {
        return publisher.publishAsync(event.destination(), event.key() == null ? "" : event.key(), properties(event),
                event.payload());
    }

    /**
     * Awaits each publish's confirm and adds the confirmed ids. A failure because the channel closed goes to
     * {@code closedOut} when one is given; an event-specific one is added to {@code rejected}; returns the first
     * failure not sent to {@code closedOut}, or null. Stops at an interrupt.
     */
    private static Exception awaitConfirms(List<OutboxEvent> events, List<CompletableFuture<String>> sent,
            Set<String> confirmed, Map<String, String> rejected, List<OutboxEvent> closedOut) {
        Exception failure = null;
        for (int i = 0; i < events.size(); i++) {
            try {
                sent.get(i).get();
                confirmed.add(events.get(i).messageId());
            } catch (ExecutionException e) {
                Exception error = (Exception) e.getCause();
                if (closedOut != null && isChannelClosed(error)) {
                    closedOut.add(events.get(i));
                    continue;
                }
                // Without closedOut, the event was published alone: a channel closed over it is its own fault.
                if (isEventSpecific(error)) {
                    rejected.put(events.get(i).messageId(), error.getMessage());
                }
                if (failure == null) {
                    failure = error;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return e;
            }
        }
        return failure;
    }

    private static boolean isChannelClosed(Exception error) {
        return error instanceof PublishException publish && publish.reason() == PublishException.Reason.CHANNEL_CLOSED;
    }

    /**
     * Unroutable, or a channel the broker closed over the publish (channel-level: a connection-level close or a lost
     * connection is the broker's trouble, not the event's).
     */
    private static boolean isEventSpecific(Exception error) {
        if (!(error instanceof PublishException publish)) {
            return false;
        }
        return publish.reason() == PublishException.Reason.UNROUTABLE
                || publish.reason() == PublishException.Reason.CHANNEL_CLOSED
                && publish.getCause() instanceof ShutdownSignalException signal && !signal.isHardError()
                && !signal.isInitiatedByApplication() && signal.getReason() instanceof AMQP.Channel.Close;
    }

    private static AMQP.BasicProperties properties(OutboxEvent event) {
        Map<String, Object> headers = new HashMap<>(event.headers());
        return new AMQP.BasicProperties.Builder().messageId(event.messageId()).deliveryMode(PERSISTENT)
                .headers(headers).build();
    }
}
