package dev.dedup.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Acks sent in runs ({@code ackInRuns}), on the real broker: every delivery settled, none settled by mistake. */
@Timeout(120)
class AckRunsOnRabbitMqTest {
    private static final Duration RETRY_DELAY = Duration.ofMillis(300);
    private static final Duration RUN_DELAY = Duration.ofMillis(50);

    private RabbitFixture rabbit;
    private InMemoryDedupStore store;
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final List<ProcessingOutcome<?>> outcomes = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        rabbit = new RabbitFixture(RETRY_DELAY);
        store = new InMemoryDedupStore("rabbit-runs");
    }

    @AfterEach
    void tearDown() throws IOException {
        rabbit.close();
        store.close();
    }

    private IdempotentDeliverCallback<String> consume(Connection connection, int prefetch, int runSize)
            throws IOException {
        Channel channel = connection.createChannel();
        channel.basicQos(prefetch);
        IdempotentConsumer<Delivery, String> consumer = IdempotentConsumer
                .builder(store, RabbitKeys.messageId(), ResultCodec.utf8()).lease(Duration.ofSeconds(10)).build();
        IdempotentDeliverCallback<String> callback = IdempotentDeliverCallback.builder(channel, rabbit.queues,
                consumer, delivery -> {
                    runs.computeIfAbsent(delivery.getProperties().getMessageId(), id -> new AtomicInteger())
                            .incrementAndGet();
                    return "done";
                })
                .ackInRuns(runSize, RUN_DELAY)
                .listener((delivery, outcome, settlement) -> outcomes.add(outcome))
                .build();
        channel.basicConsume(rabbit.queues.queue(), false, callback, tag -> { });
        return callback;
    }

    @Test
    @DisplayName("acks in runs settle every delivery: after the consumer dies, nothing comes back to the queue")
    void everyDeliveryIsAckedByItsRun() throws Exception {
        Connection connection = rabbit.connect("runs-consumer");
        IdempotentDeliverCallback<String> callback = consume(connection, 10, 8);
        for (int i = 0; i < 100; i++) {
            rabbit.publish("order-" + i, "reserve " + i);
        }

        Await.until("100 deliveries acked", () -> callback.counts().acked() == 100);
        Thread.sleep(RUN_DELAY.toMillis() * 4); // the last, partial run goes out by its delay
        connection.abort();                        // an unacked delivery would now return to the queue

        Thread.sleep(500);
        assertThat(rabbit.ready(rabbit.queues.queue())).as("deliveries returned unacked").isZero();
        assertThat(runs).hasSize(100).allSatisfy((id, count) -> assertThat(count.get()).as(id).isEqualTo(1));
    }

    @Test
    @DisplayName("a delivery held back for a delayed requeue is not settled by a later run: it comes back and runs")
    void aRunDoesNotAckADeliveryHeldForARequeue() throws Exception {
        rabbit.channel.queueDelete(rabbit.queues.retryQueue());   // nowhere to park: a requeue after the delay
        var holder = (dev.dedup.Claim) store.claim("order-held", Duration.ofMinutes(5)); // another consumer has it
        IdempotentDeliverCallback<String> callback = consume(rabbit.connect("runs-consumer"), 10, 3);
        rabbit.publish("order-held", "reserve held");
        for (int i = 0; i < 6; i++) {
            rabbit.publish("order-" + i, "reserve " + i);   // acked in runs while the held one waits its delay
        }
        Await.until("the six others processed", () -> runs.size() == 6);
        store.release(holder);                              // the other consumer gives the key back

        Await.until("the held delivery requeued and processed", () -> runs.containsKey("order-held"));
        assertThat(runs.get("order-held")).hasValue(1);
        assertThat(callback.counts().requeuedLater()).isGreaterThanOrEqualTo(1);
    }

    @Test
    @DisplayName("ackInRuns refuses sizes and delays out of range, naming the value and the range")
    void badRunSettingsAreRefused() throws Exception {
        IdempotentDeliverCallback.Builder<Void> builder = IdempotentDeliverCallback.builder(rabbit.channel,
                rabbit.queues, store, delivery -> null);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> builder.ackInRuns(0, RUN_DELAY))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 10000")
                .hasMessageContaining("was 0");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> builder.ackInRuns(5, Duration.ofSeconds(11)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 ms to 10 s")
                .hasMessageContaining("PT11S");
    }
}
