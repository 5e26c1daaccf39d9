package dev.dedup.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
    private final Connection connection;
    private final Duration timeout;
    private final Object publishLock = new Object();
    private volatile ConfirmChannel channel;
    private volatile boolean closed;

    private ConfirmedPublisher(Connection connection, Duration timeout, ConfirmChannel channel) {
        this.connection = connection;
        this.timeout = timeout;
        this.channel = channel;
    }

    /**
     * Opens a publisher on a new channel of {@code connection}. When the broker closes that channel over an error of
     * the channel's own (a publish to a missing exchange: 404), the next publish opens another; when the connection
     * fails, its automatic recovery, if enabled, reopens the channel.
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
        return new ConfirmedPublisher(connection, timeout, ConfirmChannel.open(connection, timeout));
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
        CompletableFuture<Void> confirmed;
        synchronized (publishLock) {
            try {
                confirmed = channel().publish(exchange, routingKey, sent, body);
            } catch (IOException | ShutdownSignalException e) {
                return CompletableFuture.failedFuture(
                        failure(PublishException.Reason.CHANNEL_CLOSED, messageId, exchange, routingKey, e));
            }
        }
        return confirmed.handle((ok, error) -> {
            if (error == null) {
                return messageId;
            }
            if (error instanceof ConfirmChannel.Failure carrier) {
                throw failure(carrier.reason, messageId, exchange, routingKey, carrier.getCause());
            }
            PublishException.Reason reason = error instanceof TimeoutException ? PublishException.Reason.TIMED_OUT
                    : PublishException.Reason.CHANNEL_CLOSED;
            throw failure(reason, messageId, exchange, routingKey, reason == PublishException.Reason.TIMED_OUT
                    ? null : error);
        });
    }

    /**
     * The channel to publish on: a new one when the broker closed the last over an error of its own. After a
     * connection-level error the same one, which the connection's recovery reopens in place (or nothing does).
     */
    private ConfirmChannel channel() throws IOException {
        ConfirmChannel current = channel;
        if (!closed && !current.isOpen() && current.closedByChannelError()) {
            current.abort();
            current = ConfirmChannel.open(connection, timeout);
            channel = current;
            if (closed) {
                current.close();    // close() ran meanwhile, on the channel this one replaced
            }
        }
        return current;
    }

    /**
     * Whether the publisher can still publish: its channel is open, or was closed over an error of its own and the
     * next publish opens another.
     *
     * @return false once {@link #close()}d, or once the connection closed
     */
    public boolean isOpen() {
        ConfirmChannel current = channel;
        return !closed && (current.isOpen() || current.closedByChannelError() && connection.isOpen());
    }

    /**
     * Closes the publisher's channel; publishes still waiting fail with {@link PublishException.Reason#CHANNEL_CLOSED}.
     */
    @Override
    public void close() {
        closed = true;
        channel.close();
    }

    private static AMQP.BasicProperties withMessageId(AMQP.BasicProperties properties) {
        String id = properties.getMessageId();
        if (id != null && !id.isBlank()) {
            return properties;
        }
        return properties.builder().messageId(UUID.randomUUID().toString()).build();
    }

    private static PublishException failure(PublishException.Reason reason, String messageId, String exchange,
            String routingKey, Throwable cause) {
        String what = switch (reason) {
            case NACKED -> "the broker refused it (basic.nack)";
            case UNROUTABLE -> "no queue is bound for it: it was returned, not stored";
            case TIMED_OUT -> "no confirm arrived in time; the broker may or may not have stored it";
            case CHANNEL_CLOSED -> "the channel closed before the confirm" + brokerReply(cause)
                    + "; the broker may or may not have stored it";
            case INTERRUPTED -> "interrupted while waiting for the confirm; the broker may or may not have stored it";
        };
        return new PublishException(reason, messageId, "publish of message-id " + messageId + " to exchange '"
                + exchange + "' with routing key '" + routingKey + "' failed: " + what, cause);
    }

    /** Why the broker closed the channel or connection, as it said it ("404 NOT_FOUND - no exchange ..."), or "". */
    private static String brokerReply(Throwable cause) {
        if (cause instanceof ShutdownSignalException signal && !signal.isInitiatedByApplication()) {
            if (signal.getReason() instanceof AMQP.Channel.Close close) {
                return " (" + close.getReplyCode() + " " + close.getReplyText() + ")";
            }
            if (signal.getReason() instanceof AMQP.Connection.Close close) {
                return " (" + close.getReplyCode() + " " + close.getReplyText() + ")";
            }
        }
        return "";
    }
}
