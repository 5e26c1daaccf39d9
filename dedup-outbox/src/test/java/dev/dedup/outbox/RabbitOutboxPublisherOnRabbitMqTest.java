package dev.dedup.outbox;

import static dev.dedup.outbox.OutboxTestSupport.unique;
import static dev.dedup.outbox.OutboxTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher;
import dev.dedup.rabbitmq.ConfirmedPublisher;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The RabbitMQ publisher's waves on the real broker: a key's events in order, a failed one holds its key back. */
class RabbitOutboxPublisherOnRabbitMqTest {
    private Connection rabbit;
    private Channel admin;
    private ConfirmedPublisher confirmed;
    private final List<String> queues = new ArrayList<>();

    @BeforeEach
    void connect() throws Exception {
        rabbit = OutboxTestSupport.rabbitFactory().newConnection("outbox-publisher-test");
        admin = rabbit.createChannel();
        confirmed = ConfirmedPublisher.open(rabbit, Duration.ofSeconds(10));
    }

    @AfterEach
    void disconnect() throws Exception {
        confirmed.close();
        for (String queue : queues) {
            admin.queueDelete(queue);
        }
        rabbit.close();
    }

    @Test
    @DisplayName("interleaved keys: every event confirmed, each queue (key) receives its events in batch order")
    void interleavedKeysArriveInEachKeysOrder() throws Exception {
        String a = queue(Map.of());
        String b = queue(Map.of());
        List<OutboxEvent> batch = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            batch.add(event(i % 2 == 0 ? a : b, "e" + i));
        }

        new RabbitOutboxPublisher(confirmed).publish(batch);

        assertThat(bodies(a)).containsExactly("e0", "e2", "e4", "e6", "e8", "e10", "e12", "e14", "e16", "e18");
        assertThat(bodies(b)).containsExactly("e1", "e3", "e5", "e7", "e9", "e11", "e13", "e15", "e17", "e19");
    }

    @Test
    @DisplayName("a refused event: other keys' events of its wave are confirmed, its key's next event is never sent")
    void aRefusedEventHoldsBackItsKeyOnly() throws Exception {
        // Takes one message, refuses (nacks) the next while it holds one.
        String full = queue(Map.of("x-max-length", 1, "x-overflow", "reject-publish"));
        String open = queue(Map.of());
        OutboxEvent first = event(full, "f1");
        OutboxEvent refused = event(full, "f2");
        OutboxEvent heldBack = event(full, "f3");
        OutboxEvent other1 = event(open, "o1");
        OutboxEvent other2 = event(open, "o2");

        OutboxPublishException failure = catchThrowableOfType(
                () -> new RabbitOutboxPublisher(confirmed).publish(List.of(first, other1, refused, other2, heldBack)),
                OutboxPublishException.class);

        assertThat(failure.confirmed()).containsExactlyInAnyOrder(first.messageId(), other1.messageId(),
                other2.messageId());
        assertThat(failure).hasMessageContaining("did not confirm 2 of 5");
        assertThat(bodies(open)).containsExactly("o1", "o2");
        // f3 was never published: with f1 taken, the queue frees a place and f3 would now be stored, but nothing came.
        assertThat(bodies(full)).containsExactly("f1");
        assertThat(admin.queueDeclarePassive(full).getMessageCount()).isZero();
    }

    private String queue(Map<String, Object> arguments) throws Exception {
        String queue = unique("outbox-publisher");
        admin.queueDeclare(queue, false, false, false, arguments);
        queues.add(queue);
        return queue;
    }

    /** An event for the default exchange: its key is the queue's name, so a key is a queue. */
    private static OutboxEvent event(String queue, String body) {
        return new OutboxEvent(0, java.util.UUID.randomUUID().toString(), "", queue, utf8(body), Map.of(),
                Instant.now());
    }

    private List<String> bodies(String queue) throws Exception {
        List<String> bodies = new ArrayList<>();
        for (GetResponse message = admin.basicGet(queue, true); message != null;
                message = admin.basicGet(queue, true)) {
            bodies.add(new String(message.getBody(), StandardCharsets.UTF_8));
        }
        return bodies;
    }
}
