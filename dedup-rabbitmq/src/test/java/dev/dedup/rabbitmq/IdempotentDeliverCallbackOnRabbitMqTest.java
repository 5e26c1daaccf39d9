package dev.dedup.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Each outcome's settlement, on the real broker, with the in-memory store. */
@Timeout(120)
class IdempotentDeliverCallbackOnRabbitMqTest {
    private static final Duration RETRY_DELAY = Duration.ofMillis(300);

    /** A clock the test moves forward, to let a lease lapse mid-handler without waiting for it. */
    private static final class MovableClock extends Clock {
        final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());

        @Override
        public Instant instant() {
            return now.get();
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    private RabbitFixture rabbit;
    private MovableClock clock;
    private InMemoryDedupStore store;
    private final List<ProcessingOutcome<?>> outcomes = new CopyOnWriteArrayList<>();
    private final List<Settlement> settlements = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        rabbit = new RabbitFixture(RETRY_DELAY);
        clock = new MovableClock();
        store = new InMemoryDedupStore("rabbit", clock);
    }

    @AfterEach
    void tearDown() throws IOException {
        rabbit.close();
        store.close();
    }

    /** Consumes the work queue on a connection of its own with a callback around {@code consumer}. */
    private <R> IdempotentDeliverCallback<R> consume(IdempotentConsumer<Delivery, R> consumer,
            MessageHandler<Delivery, R> handler, UnaryOperator<IdempotentDeliverCallback.Builder<R>> settings)
            throws IOException, TimeoutException {
        Channel channel = rabbit.connect("test-consumer").createChannel();
        channel.basicQos(10);
        IdempotentDeliverCallback<R> callback = settings.apply(
                IdempotentDeliverCallback.builder(channel, rabbit.queues, consumer, handler)
                        .listener((delivery, outcome, settlement) -> {
                            outcomes.add(outcome);
                            settlements.add(settlement);
                        })).build();
        channel.basicConsume(rabbit.queues.queue(), false, callback, tag -> { });
        return callback;
    }

    private IdempotentConsumer.Builder<Delivery, String> consumerBuilder() {
        return IdempotentConsumer.builder(store, RabbitKeys.messageId(), ResultCodec.utf8())
                .lease(Duration.ofSeconds(10));
    }

    private <R> IdempotentDeliverCallback<R> consume(IdempotentConsumer<Delivery, R> consumer,
            MessageHandler<Delivery, R> handler) throws IOException, TimeoutException {
        return consume(consumer, handler, UnaryOperator.identity());
    }

    private long count(Class<?> outcome) {
        return outcomes.stream().filter(outcome::isInstance).count();
    }

    private GetResponse awaitDeadLetter() throws Exception {
        AtomicReference<GetResponse> taken = new AtomicReference<>();
        Await.until("a message in the dead-letter queue", () -> {
            try {
                taken.set(rabbit.takeDeadLetter());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return taken.get() != null;
        });
        return taken.get();
    }

    /**
     * The callback counts a settlement after sending it, and the listener hears the outcome before: wait for the
     * counts to catch up (they must reach the expected ones, and never pass them) before comparing.
     */
    private static void assertCounts(IdempotentDeliverCallback<?> callback, DeliveryCounts expected)
            throws InterruptedException {
        Await.within(Duration.ofSeconds(5), () -> callback.counts().equals(expected));
        assertThat(callback.counts()).isEqualTo(expected);
    }

    private static String body(Delivery delivery) {
        return new String(delivery.getBody(), StandardCharsets.UTF_8);
    }

    @Test
    void processedAndAlreadyProcessedAreAckedAndDuplicatePublishesRunOnce() throws Exception {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            runs.computeIfAbsent(delivery.getProperties().getMessageId(), id -> new AtomicInteger()).incrementAndGet();
            return "done " + body(delivery);
        });
        for (int i = 0; i < 10; i++) {
            rabbit.publish("order-" + i, "reserve " + i);
        }
        for (int i = 0; i < 3; i++) {
            rabbit.publish("order-" + i, "reserve " + i);   // the producer retried: same message-id
        }

        Await.until("13 deliveries acked", () -> callback.counts().acked() == 13);
        assertThat(runs).hasSize(10).allSatisfy((id, count) -> assertThat(count.get()).as(id).isEqualTo(1));
        assertThat(count(ProcessingOutcome.Processed.class)).isEqualTo(10);
        assertThat(count(ProcessingOutcome.AlreadyProcessed.class)).isEqualTo(3);
        assertCounts(callback, new DeliveryCounts(13, 0, 0, 0, 0));
        assertThat(rabbit.ready(rabbit.queues.queue())).isZero();
        assertThat(rabbit.ready(rabbit.queues.deadLetterQueue())).isZero();
    }

    @Test
    void inProgressElsewhereIsParkedAndRedeliveredAfterTheDelayNotInAHotLoop() throws Exception {
        store.claim("order-1", Duration.ofMinutes(5));   // another consumer holds the key
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            runs.incrementAndGet();
            return "done";
        });
        rabbit.publish("order-1", "reserve");

        Thread.sleep(2_000);
        long deliveriesInWindow = count(ProcessingOutcome.InProgressElsewhere.class);
        // A requeue would redeliver thousands of times in 2 s; parking for 300 ms allows about 7.
        assertThat(deliveriesInWindow).isBetween(2L, 2_000L / RETRY_DELAY.toMillis() + 2);
        assertThat(settlements).containsOnly(Settlement.RETRY_LATER);
        assertThat(runs).hasValue(0);

        // The other consumer crashed: its lease lapses, and the next redelivery takes the key.
        clock.now.updateAndGet(now -> now.plusSeconds(600));
        Await.until("the parked message processed", () -> count(ProcessingOutcome.Processed.class) == 1);
        assertThat(runs).hasValue(1);
        assertThat(callback.counts().parked()).isGreaterThanOrEqualTo(deliveriesInWindow);
        assertThat(callback.counts().acked()).isEqualTo(1);
        assertThat(rabbit.ready(rabbit.queues.deadLetterQueue())).isZero();
    }

    @Test
    void aRetryableFailureIsParkedAndTheNextDeliverySucceeds() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            if (runs.incrementAndGet() == 1) {
                throw new IOException("inventory service timed out");
            }
            return "done";
        });
        rabbit.publish("order-1", "reserve");

        Await.until("processed on the second delivery", () -> count(ProcessingOutcome.Processed.class) == 1);
        assertThat(runs).hasValue(2);
        assertThat(settlements).containsExactly(Settlement.RETRY_LATER, Settlement.ACK);
        assertCounts(callback, new DeliveryCounts(1, 1, 0, 0, 0));
    }

    @Test
    void retryableFailuresAreDeadLetteredOnceMaxAttemptsAreUsedUp() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            runs.incrementAndGet();
            throw new IllegalStateException("inventory service down");
        }, builder -> builder.maxAttempts(3));
        rabbit.publish("order-1", "reserve");

        GetResponse dead = awaitDeadLetter();
        assertThat(dead.getProps().getMessageId()).isEqualTo("order-1");
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("reserve");
        // The third delivery carried the two earlier failures; the broker says why it dead-lettered it.
        assertThat(Attempts.of(dead.getProps())).isEqualTo(2);
        assertThat(deathReasons(dead)).contains("rejected");
        assertThat(runs).hasValue(3);
        assertThat(settlements).containsExactly(Settlement.RETRY_LATER, Settlement.RETRY_LATER,
                Settlement.DEAD_LETTER);
        assertCounts(callback, new DeliveryCounts(0, 2, 0, 1, 0));
        assertThat(rabbit.ready(rabbit.queues.queue())).isZero();
        assertThat(rabbit.ready(rabbit.queues.retryQueue())).isZero();
    }

    @Test
    void aKeptFailureAndItsAlreadyFailedRedeliveryAreDeadLettered() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        IdempotentConsumer<Delivery, String> consumer = consumerBuilder()
                .keepKeyOn(e -> e instanceof IllegalArgumentException).build();
        IdempotentDeliverCallback<String> callback = consume(consumer, delivery -> {
            runs.incrementAndGet();
            throw new IllegalArgumentException("unknown SKU");
        });
        rabbit.publish("order-1", "reserve");
        awaitDeadLetter();
        rabbit.publish("order-1", "reserve");   // the producer retried
        awaitDeadLetter();

        assertThat(runs).hasValue(1);
        assertThat(outcomes).hasSize(2);
        assertThat(outcomes.get(0)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.keyKept()).isTrue());
        assertThat(outcomes.get(1)).isInstanceOf(ProcessingOutcome.AlreadyFailed.class);
        assertCounts(callback, new DeliveryCounts(0, 0, 0, 2, 0));
    }

    @Test
    void aReusedMessageIdWithAnotherPayloadIsDeadLetteredNotReplayed() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        IdempotentConsumer<Delivery, String> consumer = consumerBuilder()
                .fingerprint(delivery -> delivery.getBody().clone()).build();
        IdempotentDeliverCallback<String> callback = consume(consumer, delivery -> {
            applied.add(body(delivery));
            return "reserved";
        });
        rabbit.publish("order-1", "reserve 2");
        Await.until("processed", () -> count(ProcessingOutcome.Processed.class) == 1);
        rabbit.publish("order-1", "reserve 2");     // the producer retried: a replay
        Await.until("replayed", () -> count(ProcessingOutcome.AlreadyProcessed.class) == 1);
        rabbit.publish("order-1", "reserve 50");    // another message under the same id

        GetResponse dead = awaitDeadLetter();

        assertThat(dead.getProps().getMessageId()).isEqualTo("order-1");
        assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("reserve 50");
        assertThat(deathReasons(dead)).contains("rejected");
        assertThat(applied).containsExactly("reserve 2");
        assertThat(outcomes.get(2)).isEqualTo(new ProcessingOutcome.KeyReused<>("order-1"));
        assertThat(settlements).containsExactly(Settlement.ACK, Settlement.ACK, Settlement.DEAD_LETTER);
        assertCounts(callback, new DeliveryCounts(2, 0, 0, 1, 0));
        assertThat(rabbit.ready(rabbit.queues.queue())).isZero();
    }

    @Test
    void aDeliveryWithoutMessageIdIsDeadLetteredWithoutRunningTheHandler() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            runs.incrementAndGet();
            return "done";
        });
        // A publisher that sets no message-id (the plain client's default).
        rabbit.channel.basicPublish("", rabbit.queues.queue(), new AMQP.BasicProperties(),
                "reserve".getBytes(StandardCharsets.UTF_8));

        GetResponse dead = awaitDeadLetter();
        assertThat(dead.getProps().getMessageId()).isNull();
        assertThat(runs).hasValue(0);
        assertThat(outcomes).singleElement().isInstanceOfSatisfying(ProcessingOutcome.Failed.class, failed -> {
            assertThat(failed.key()).isNull();
            assertThat(failed.cause()).isInstanceOf(MissingMessageIdException.class)
                    .hasMessageContaining("no message-id");
        });
        assertCounts(callback, new DeliveryCounts(0, 0, 0, 1, 0));
    }

    @Test
    void leaseLostIsAckedAndCounted() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            runs.incrementAndGet();
            clock.now.updateAndGet(now -> now.plusSeconds(60));   // the handler outlived its 10 s lease
            return "done";
        });
        rabbit.publish("order-1", "reserve");

        Await.until("acked", () -> callback.counts().acked() == 1);
        assertThat(outcomes).singleElement().isInstanceOf(ProcessingOutcome.LeaseLost.class);
        assertCounts(callback, new DeliveryCounts(1, 0, 0, 0, 1));
        assertThat(rabbit.ready(rabbit.queues.queue())).isZero();
        assertThat(rabbit.ready(rabbit.queues.deadLetterQueue())).isZero();
    }

    @Test
    void whenParkingFailsTheDeliveryIsRequeuedAfterTheDelayNotAtOnce() throws Exception {
        rabbit.channel.queueDelete(rabbit.queues.retryQueue());   // a broken topology: nowhere to park
        store.claim("order-1", Duration.ofMinutes(5));
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> "done");
        rabbit.publish("order-1", "reserve");

        Thread.sleep(2_000);
        long deliveriesInWindow = count(ProcessingOutcome.InProgressElsewhere.class);
        assertThat(deliveriesInWindow).isBetween(2L, 2_000L / RETRY_DELAY.toMillis() + 2);
        assertThat(callback.counts().requeuedLater()).isGreaterThanOrEqualTo(2);
        assertThat(callback.counts().parked()).isZero();
    }

    @Test
    void aFailureBeforeTheHandlerRanIsNotAnAttempt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            runs.incrementAndGet();
            return "done";
        }, builder -> builder.maxAttempts(1));
        store.close();      // as at shutdown: the claim throws IllegalStateException
        rabbit.publish("order-1", "reserve");

        Await.until("settled", () -> !settlements.isEmpty());
        assertThat(settlements.get(0)).isEqualTo(Settlement.RETRY_LATER);
        Await.until("parked, back and parked again", () -> settlements.size() >= 2);
        assertThat(settlements.get(1)).isEqualTo(Settlement.RETRY_LATER);
        assertThat(runs).hasValue(0);
        assertThat(callback.counts().deadLettered()).isZero();
        assertThat(rabbit.takeDeadLetter()).isNull();
    }

    @Test
    void whenParkingFailsTheRequeuedDeliveryStillCountsItsAttempts() throws Exception {
        rabbit.channel.queueDelete(rabbit.queues.retryQueue());   // a broken topology: nowhere to park
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<String> callback = consume(consumerBuilder().build(), delivery -> {
            runs.incrementAndGet();
            throw new IllegalStateException("inventory service down");
        }, builder -> builder.maxAttempts(2));
        rabbit.publish("order-1", "reserve");

        // Requeued after the retry delay, it comes back once: not with its first attempt forgotten, forever.
        Await.until("dead-lettered", Duration.ofSeconds(5), () -> callback.counts().deadLettered() == 1);
        assertThat(awaitDeadLetter().getProps().getMessageId()).isEqualTo("order-1");
        assertThat(runs).hasValue(2);
        assertThat(settlements).containsExactly(Settlement.RETRY_LATER, Settlement.DEAD_LETTER);
        assertThat(callback.counts().requeuedLater()).isEqualTo(1);
    }

    @Test
    void theStoreOnlyBuilderKeysByMessageId() throws Exception {
        Channel channel = rabbit.connect("test-consumer").createChannel();
        AtomicInteger runs = new AtomicInteger();
        IdempotentDeliverCallback<Void> callback = IdempotentDeliverCallback.builder(channel, rabbit.queues, store,
                delivery -> {
                    runs.incrementAndGet();
                    return null;
                }).build();
        channel.basicConsume(rabbit.queues.queue(), false, callback, tag -> { });
        rabbit.publish("order-1", "reserve");
        rabbit.publish("order-1", "reserve");

        Await.until("both acked", () -> callback.counts().acked() == 2);
        assertThat(runs).hasValue(1);
        callback.close();
    }

    @SuppressWarnings("unchecked")
    private static List<String> deathReasons(GetResponse response) {
        List<Map<String, Object>> deaths = (List<Map<String, Object>>) response.getProps().getHeaders().get("x-death");
        return deaths.stream().map(death -> String.valueOf(death.get("reason"))).toList();
    }
}
