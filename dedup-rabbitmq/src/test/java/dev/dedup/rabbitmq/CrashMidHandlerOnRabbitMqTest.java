package dev.dedup.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.dedup.IdempotentConsumer;
import dev.dedup.MessageHandler;
import dev.dedup.ResultCodec;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A consumer's connection dies mid-handler, without an ack; the broker redelivers to a second consumer. The effect
 * lands in PostgreSQL and the claims live in the PostgreSQL store.
 */
@Timeout(120)
class CrashMidHandlerOnRabbitMqTest {
    private RabbitFixture rabbit;
    private Reservations reservations;
    private IdempotentConsumer<Delivery, Void> consumer;

    @BeforeEach
    void setUp() throws Exception {
        rabbit = new RabbitFixture(Duration.ofMillis(300));
        reservations = new Reservations(RabbitTestBroker.unique("rabbit_crash").replace('-', '_'));
        consumer = IdempotentConsumer.builder(reservations.store(), RabbitKeys.messageId(), ResultCodec.none())
                .lease(Duration.ofSeconds(10)).build();
    }

    @AfterEach
    void tearDown() throws Exception {
        rabbit.close();
        reservations.close();
    }

    private IdempotentDeliverCallback<Void> consume(Connection connection, MessageHandler<Delivery, Void> handler)
            throws IOException {
        Channel channel = entryChannel(connection.createChannel());
        IdempotentDeliverCallback<Void> callback =
                IdempotentDeliverCallback.builder(channel, rabbit.queues, consumer, handler).build();
        channel.basicConsume(rabbit.queues.queue(), false, callback, tag -> { });
        return callback;
    }

    /**
     * The channel the callback consumes and settles on: the real one here, a mutant's in
     * {@link EntryPointMutantsTest}.
     */
    Channel entryChannel(Channel channel) {
        return channel;
    }

    /** Runs the first delivery on a consumer that dies at {@code crash}, then lets a healthy consumer take over. */
    private IdempotentDeliverCallback<Void> crashThenRecover(boolean effectBeforeCrash, boolean haltBeforeCompletion)
            throws Exception {
        Connection doomed = rabbit.connect("doomed");
        CountDownLatch crashed = new CountDownLatch(1);
        consume(doomed, delivery -> {
            if (effectBeforeCrash) {
                reservations.reserve(delivery.getProperties().getMessageId(), "doomed", 1, 1);
            }
            doomed.abort(5_000);   // the process dies: no ack will ever be sent on this connection
            crashed.countDown();
            if (haltBeforeCompletion) {
                throw new Halt();
            }
            return null;
        });
        rabbit.publish("order-1", "reserve 1 x sku 1");
        assertThat(crashed.await(30, TimeUnit.SECONDS)).isTrue();
        Await.until("the doomed connection closed", () -> !doomed.isOpen());
        // The broker takes back what the dead consumer never acked, for the next consumer.
        assertThat(Await.within(Duration.ofSeconds(10), () -> readyOrZero(rabbit.queues.queue()) == 1))
                .as("the delivery the crashed consumer had not acked is back in the work queue").isTrue();

        IdempotentDeliverCallback<Void> healthy = consume(rabbit.connect("healthy"), delivery -> {
            reservations.reserve(delivery.getProperties().getMessageId(), "healthy", 1, 1);
            return null;
        });
        Await.until("the redelivery acked", () -> healthy.counts().acked() == 1);
        Await.until("the work queue empty", () -> readyOrZero(rabbit.queues.queue()) == 0);
        return healthy;
    }

    private long readyOrZero(String queue) {
        try {
            return rabbit.ready(queue);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aCrashAfterCompletionButBeforeTheAckTakesEffectOnce() throws Exception {
        crashThenRecover(true, false);
        assertThat(reservations.effectRows()).isEqualTo(1);
        assertThat(reservations.totalReserved()).isEqualTo(1);
    }

    @Test
    void aCrashBeforeTheEffectTakesEffectOnceOnTheRedelivery() throws Exception {
        crashThenRecover(false, true);
        assertThat(reservations.effectRows()).isEqualTo(1);
    }

    @Test
    void aCrashBetweenEffectAndCompletionRunsTheHandlerAgainTheDocumentedLimit() throws Exception {
        // The effect committed in its own transaction, the completion never came: the redelivery cannot know.
        crashThenRecover(true, true);
        assertThat(reservations.effectRows()).isEqualTo(2);
    }

    @Test
    void aConnectionClosedWhileTheHandlerRunsDoesNotDoubleTheEffect() throws Exception {
        // The broker redelivers at once, while the first handler is still running: the key is in progress there.
        Connection slow = rabbit.connect("slow");
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        consume(slow, delivery -> {
            inHandler.countDown();
            resume.await(30, TimeUnit.SECONDS);
            reservations.reserve(delivery.getProperties().getMessageId(), "slow", 1, 1);
            return null;
        });
        rabbit.publish("order-1", "reserve 1 x sku 1");
        assertThat(inHandler.await(30, TimeUnit.SECONDS)).isTrue();
        slow.abort(5_000);
        IdempotentDeliverCallback<Void> other = consume(rabbit.connect("other"), delivery -> {
            reservations.reserve(delivery.getProperties().getMessageId(), "other", 1, 1);
            return null;
        });
        Await.until("the redelivery parked", () -> other.counts().parked() >= 1);
        resume.countDown();   // the first handler finishes and completes the key; its ack goes nowhere
        Await.until("the parked copy acked as already processed", () -> other.counts().acked() == 1);
        assertThat(reservations.effectRows()).isEqualTo(1);
    }
}
