package dev.dedup.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Return;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes messages with a {@code message-id} (a random UUID where the caller set none) and returns only once the
 * broker has confirmed it stored them: on its own channel in confirm mode, every publish {@code mandatory}, so a
 * message no queue would take fails as {@link PublishException.Reason#UNROUTABLE} instead of vanishing.
 *
 * <pre>{@code
 * try (ConfirmedPublisher publisher = ConfirmedPublisher.open(connection, Duration.ofSeconds(5))) {
 *     String id = publisher.publish("", "orders", new AMQP.BasicProperties.Builder().build(), body);
 * }
 * }</pre>
 *
 * <p>Thread-safe: publishes from several threads share the channel, each waiting for its own confirm only.
 */
public final class ConfirmedPublisher implements AutoCloseable {
    /** One publish awaiting its confirm; {@code returned} is set by a basic.return, which precedes the ack. */
    private static final class Pending {
        final String messageId;
        final CompletableFuture<Void> confirmed = new CompletableFuture<>();
        volatile boolean returned;

        Pending(String messageId) {
            this.messageId = messageId;
        }
    }

    private final Channel channel;
    private final Duration timeout;
    private final ConcurrentNavigableMap<Long, Pending> pending = new ConcurrentSkipListMap<>();
    private final Object publishLock = new Object();

    private ConfirmedPublisher(Channel channel, Duration timeout) {
        this.channel = channel;
        this.timeout = timeout;
    }

    /**
     * Opens a publisher on a new channel of {@code connection}.
     *
     * @param connection an open connection; closing the publisher closes only its own channel
     * @param timeout how long {@link #publish} waits for a confirm, from 1 ms to 10 minutes
     * @return the publisher
     * @throws IOException when the channel cannot be opened or put in confirm mode
     */
    public static ConfirmedPublisher open(Connection connection, Duration timeout) throws IOException {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("timeout must be from 1 ms to 10 minutes, but was " + timeout);
        }
        Channel channel = connection.createChannel();
        if (channel == null) {
            throw new IOException("the connection has no channel number left");
        }
        ConfirmedPublisher publisher = new ConfirmedPublisher(channel, timeout);
        channel.addReturnListener(publisher::onReturn);
        channel.addConfirmListener((tag, multiple) -> publisher.settle(tag, multiple, null),
                (tag, multiple) -> publisher.settle(tag, multiple, PublishException.Reason.NACKED));
        channel.addShutdownListener(publisher::onShutdown);
        channel.confirmSelect();
        return publisher;
    }

    /**
     * Publishes {@code body} and waits for the broker's confirm.
     *
     * @param exchange the exchange ("" for the default exchange, where the routing key is a queue name)
     * @param routingKey the routing key
     * @param properties the message's properties; a copy with a random UUID {@code message-id} is sent when they
     *     carry none
     * @param body the message body
     * @return the {@code message-id} the message was published with
     * @throws PublishException when the broker did not confirm the message (see {@link PublishException#reason()})
     */
    public String publish(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
        AMQP.BasicProperties sent = withMessageId(properties == null ? new AMQP.BasicProperties() : properties);
        CompletableFuture<String> confirmed = publishAsync(exchange, routingKey, sent, body);
        try {
            return confirmed.get();     // bounded: publishAsync's stage fails at the publisher's timeout
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(PublishException.Reason.INTERRUPTED, sent.getMessageId(), exchange, routingKey, e);
        } catch (ExecutionException e) {
            throw (PublishException) e.getCause();
        }
    }

    /**
     * Publishes {@code body} without waiting for the broker's confirm: several messages sent this way before their
     * confirms are awaited share the round trips. The broker routes one channel's messages in the order they were
     * published; only a message that fails may reach a queue after one published later (when it is sent again).
     *
     * @param exchange the exchange ("" for the default exchange, where the routing key is a queue name)
     * @param routingKey the routing key
     * @param properties the message's properties; a copy with a random UUID {@code message-id} is sent when they
     *     carry none
     * @param body the message body
     * @return completes with the {@code message-id} once the broker confirmed the message, or exceptionally with a
     *     {@link PublishException} (no confirm within the publisher's timeout: {@code TIMED_OUT})
     */
    public CompletableFuture<String> publishAsync(String exchange, String routingKey, AMQP.BasicProperties properties,
            byte[] body) {
        Objects.requireNonNull(exchange, "exchange");
        Objects.requireNonNull(routingKey, "routingKey");
        Objects.requireNonNull(body, "body");
        AMQP.BasicProperties sent = withMessageId(properties == null ? new AMQP.BasicProperties() : properties);
        String messageId = sent.getMessageId();
        Pending publish = new Pending(messageId);
        long sequence;
        synchronized (publishLock) {
            // Registered before the publish, so a confirm can never arrive for a sequence number not yet known.
            sequence = channel.getNextPublishSeqNo();
            pending.put(sequence, publish);
            try {
                channel.basicPublish(exchange, routingKey, true, sent, body);
            } catch (IOException | ShutdownSignalException e) {
                pending.remove(sequence);
                return CompletableFuture.failedFuture(
                        failure(PublishException.Reason.CHANNEL_CLOSED, messageId, exchange, routingKey, e));
            }
        }
        return publish.confirmed.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).handle((confirmed, error) -> {
            if (error == null) {
                return messageId;
            }
            pending.remove(sequence);
            if (error instanceof ReasonCarrier carrier) {
                throw failure(carrier.reason, messageId, exchange, routingKey, carrier.getCause());
            }
            PublishException.Reason reason = error instanceof TimeoutException ? PublishException.Reason.TIMED_OUT
                    : PublishException.Reason.CHANNEL_CLOSED;
            throw failure(reason, messageId, exchange, routingKey, reason == PublishException.Reason.TIMED_OUT
                    ? null : error);
        });
    }

    /**
     * Whether the publisher's channel is still open.
     *
     * @return false once the channel or its connection closed
     */
    public boolean isOpen() {
        return channel.isOpen();
    }

    /**
     * Closes the publisher's channel; publishes still waiting fail with {@link PublishException.Reason#CHANNEL_CLOSED}.
     */
    @Override
    public void close() {
        try {
            if (channel.isOpen()) {
                channel.close();
            }
        } catch (IOException | TimeoutException | ShutdownSignalException e) {
            // Closing an already failing channel: the shutdown listener has failed every waiting publish.
        }
    }

    private static AMQP.BasicProperties withMessageId(AMQP.BasicProperties properties) {
        String id = properties.getMessageId();
        if (id != null && !id.isBlank()) {
            return properties;
        }
        return properties.builder().messageId(UUID.randomUUID().toString()).build();
    }

    private void onReturn(int replyCode, String replyText, String exchange, String routingKey,
            AMQP.BasicProperties properties, byte[] body) {
        String id = properties.getMessageId();
        // Returns arrive in publish order, so the first unmarked publish of this id is the returned one.
        for (Pending candidate : pending.values()) {
            if (candidate.messageId.equals(id) && !candidate.returned) {
                candidate.returned = true;
                return;
            }
        }
    }

    private void settle(long tag, boolean multiple, PublishException.Reason failure) {
        Map<Long, Pending> settled = multiple ? pending.headMap(tag, true) : subMapOf(tag);
        for (Map.Entry<Long, Pending> entry : settled.entrySet()) {
            Pending publish = pending.remove(entry.getKey());
            if (publish == null) {
                continue;
            }
            PublishException.Reason reason = failure != null ? failure
                    : publish.returned ? PublishException.Reason.UNROUTABLE : null;
            if (reason == null) {
                publish.confirmed.complete(null);
            } else {
                publish.confirmed.completeExceptionally(new ReasonCarrier(reason, null));
            }
        }
    }

    private Map<Long, Pending> subMapOf(long tag) {
        return pending.subMap(tag, true, tag, true);
    }

    private void onShutdown(ShutdownSignalException cause) {
        for (Long sequence : pending.keySet()) {
            Pending publish = pending.remove(sequence);
            if (publish != null) {
                publish.confirmed.completeExceptionally(
                        new ReasonCarrier(PublishException.Reason.CHANNEL_CLOSED, cause));
            }
        }
    }

    private static PublishException failure(PublishException.Reason reason, String messageId, String exchange,
            String routingKey, Throwable cause) {
        String what = switch (reason) {
            case NACKED -> "the broker refused it (basic.nack)";
            case UNROUTABLE -> "no queue is bound for it: it was returned, not stored";
            case TIMED_OUT -> "no confirm arrived in time; the broker may or may not have stored it";
            case CHANNEL_CLOSED -> "the channel closed before the confirm; the broker may or may not have stored it";
            case INTERRUPTED -> "interrupted while waiting for the confirm; the broker may or may not have stored it";
        };
        return new PublishException(reason, messageId, "publish of message-id " + messageId + " to exchange '"
                + exchange + "' with routing key '" + routingKey + "' failed: " + what, cause);
    }

    /** Carries the reason through the future; never thrown to the caller. */
    private static final class ReasonCarrier extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient PublishException.Reason reason;

        ReasonCarrier(PublishException.Reason reason, Throwable cause) {
            super(reason.name(), cause, false, false);
            this.reason = reason;
        }
    }
}
