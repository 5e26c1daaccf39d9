package dev.dedup.examples.readme;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import dev.dedup.rabbitmq.DedupQueues;
import dev.dedup.rabbitmq.IdempotentDeliverCallback;
import dev.dedup.rabbitmq.PublishException;
import dev.dedup.rabbitmq.RabbitKeys;
import dev.dedup.rabbitmq.Settlement;
import java.io.IOException;
import java.time.Duration;

/** docs/rabbitmq.md's consumer and publisher, compiled. */
final class RabbitSetup {
    static final class UnknownSkuException extends Exception {
        UnknownSkuException(String sku) {
            super("unknown SKU " + sku);
        }
    }

    interface Metrics {
        void count(ProcessingOutcome<?> outcome, Settlement settlement);
    }

    private final Metrics metrics = (outcome, settlement) -> {};

    private void reserve(byte[] body) throws UnknownSkuException {
        if (body.length == 0) {
            throw new UnknownSkuException("(empty)");
        }
    }

    private void alert(PublishException e) {}

    private void retry(String messageId) {}

    void consume(Connection connection, DedupStore store) throws IOException {
        // readme:rabbit-consume
        Channel channel = connection.createChannel();
        DedupQueues queues = DedupQueues.named("orders").retryDelay(Duration.ofSeconds(2)).declare(channel);
        channel.basicQos(50);

        IdempotentConsumer<Delivery, Void> consumer =
                IdempotentConsumer.builder(store, RabbitKeys.messageId(), ResultCodec.none())
                        .lease(Duration.ofSeconds(30))               // longer than the slowest handler
                        .retention(Duration.ofDays(7))               // longer than a message can stay queued or parked
                        .keepKeyOn(e -> e instanceof UnknownSkuException)   // final failures: dead-letter, never retry
                        .build();
        IdempotentDeliverCallback<Void> callback = IdempotentDeliverCallback.builder(channel, queues, consumer, delivery -> {
                    reserve(delivery.getBody());
                    return null;
                })
                .maxAttempts(5)
                .listener((delivery, outcome, settlement) -> metrics.count(outcome, settlement))
                .build();
        channel.basicConsume(queues.queue(), false, callback, tag -> {});   // autoAck = false
        // end
    }

    void publish(Connection connection, byte[] body) throws IOException {
        // readme:rabbit-publish
        try (ConfirmedPublisher publisher = ConfirmedPublisher.open(connection, Duration.ofSeconds(5))) {
            String id = publisher.publish("", "orders",
                    new AMQP.BasicProperties.Builder().deliveryMode(2).build(), body);   // a UUID message-id is set
            publisher.publish("", "orders",
                    new AMQP.BasicProperties.Builder().messageId("order-42").deliveryMode(2).build(), body);  // kept
        } catch (PublishException e) {
            switch (e.reason()) {
                case NACKED, UNROUTABLE -> alert(e);                  // not stored
                case TIMED_OUT, CHANNEL_CLOSED, INTERRUPTED -> retry(e.messageId());   // unknown: publish again, same id
            }
        }
        // end
    }
}
