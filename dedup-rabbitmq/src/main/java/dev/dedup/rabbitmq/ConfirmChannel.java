package dev.dedup.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One channel in confirm mode and the publishes awaiting its confirms. Sequence numbers belong to a channel, so a
 * channel that replaces a closed one starts with a map of its own, and the old one's late shutdown fails only its own
 * publishes. Callers serialise {@link #publish}.
 */
final class ConfirmChannel {
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

    private ConfirmChannel(Channel channel, Duration timeout) {
        this.channel = channel;
        this.timeout = timeout;
    }

    static ConfirmChannel open(Connection connection, Duration timeout) throws IOException {
        Channel channel = connection.createChannel();
        if (channel == null) {
            throw new IOException("the connection has no channel number left");
        }
        ConfirmChannel confirms = new ConfirmChannel(channel, timeout);
        channel.addReturnListener(confirms::onReturn);
        channel.addConfirmListener((tag, multiple) -> confirms.settle(tag, multiple, null),
                (tag, multiple) -> confirms.settle(tag, multiple, PublishException.Reason.NACKED));
        channel.addShutdownListener(confirms::onShutdown);
        channel.confirmSelect();
        return confirms;
    }

    /**
     * Publishes {@code mandatory}; the future completes at the confirm, or fails with a {@link Failure}, or with a
     * {@link TimeoutException} after the timeout.
     */
    CompletableFuture<Void> publish(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body)
            throws IOException {
        Pending publish = new Pending(properties.getMessageId());
        // Registered before the publish, so a confirm can never arrive for a sequence number not yet known.
        long sequence = channel.getNextPublishSeqNo();
        pending.put(sequence, publish);
        try {
            channel.basicPublish(exchange, routingKey, true, properties, body);
        } catch (IOException | ShutdownSignalException e) {
            pending.remove(sequence);
            throw e;
        }
        publish.confirmed.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((confirmed, error) -> pending.remove(sequence));
        return publish.confirmed;
    }

    boolean isOpen() {
        return channel.isOpen();
    }

    /** Whether the channel was closed over an error of its own, with its connection unharmed. */
    boolean closedByChannelError() {
        ShutdownSignalException cause = channel.getCloseReason();
        return cause != null && !cause.isHardError() && !cause.isInitiatedByApplication();
    }

    void close() {
        try {
            if (channel.isOpen()) {
                channel.close();
            }
        } catch (IOException | TimeoutException | ShutdownSignalException e) {
            // Closing an already failing channel: the shutdown listener has failed every waiting publish.
        }
    }

    /** Lets go of a closed channel (an auto-recovering connection would otherwise reopen it at its next recovery). */
    void abort() {
        try {
            channel.abort();
        } catch (IOException | ShutdownSignalException e) {
            // Already closed: nothing to let go of.
        }
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
        Map<Long, Pending> settled = multiple ? pending.headMap(tag, true) : pending.subMap(tag, true, tag, true);
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
                publish.confirmed.completeExceptionally(new Failure(reason, null));
            }
        }
    }

    private void onShutdown(ShutdownSignalException cause) {
        for (Long sequence : pending.keySet()) {
            Pending publish = pending.remove(sequence);
            if (publish != null) {
                publish.confirmed.completeExceptionally(new Failure(PublishException.Reason.CHANNEL_CLOSED, cause));
            }
        }
    }

    /** Carries the reason through the future; never thrown to the caller. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        final transient PublishException.Reason reason;

        Failure(PublishException.Reason reason, Throwable cause) {
            super(reason.name(), cause, false, false);
            this.reason = reason;
        }
    }
}
