package dev.dedup.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

/** One test's topology on the real broker: a fresh work queue with its retry and dead-letter queues, torn down after. */
final class RabbitFixture implements AutoCloseable {
    final Connection admin;
    final Channel channel;
    final DedupQueues queues;
    final ConfirmedPublisher publisher;
    private final List<Connection> connections = new ArrayList<>();

    RabbitFixture(Duration retryDelay) throws IOException, TimeoutException {
        admin = RabbitTestBroker.connect("test-admin");
        channel = admin.createChannel();
        queues = DedupQueues.named(RabbitTestBroker.unique("orders")).retryDelay(retryDelay).declare(channel);
        publisher = ConfirmedPublisher.open(admin, Duration.ofSeconds(10));
    }

    /** A connection closed with the fixture (if the test has not closed it already). */
    Connection connect(String name) throws IOException, TimeoutException {
        Connection connection = RabbitTestBroker.connect(name);
        connections.add(connection);
        return connection;
    }

    /** Publishes {@code body} to the work queue under {@code messageId}, confirmed. */
    void publish(String messageId, String body) {
        publisher.publish("", queues.queue(), new AMQP.BasicProperties.Builder().messageId(messageId).build(),
                body.getBytes(StandardCharsets.UTF_8));
    }

    /** Messages waiting (not unacked) in {@code queue}. */
    long ready(String queue) throws IOException {
        return channel.queueDeclarePassive(queue).getMessageCount();
    }

    /** Takes one message from the dead-letter queue, or null. */
    GetResponse takeDeadLetter() throws IOException {
        return channel.basicGet(queues.deadLetterQueue(), true);
    }

    @Override
    public void close() throws IOException {
        for (Connection connection : connections) {
            if (connection.isOpen()) {
                connection.abort();
            }
        }
        publisher.close();
        Channel cleanup = admin.createChannel();
        queues.delete(cleanup);
        admin.close();
    }
}
