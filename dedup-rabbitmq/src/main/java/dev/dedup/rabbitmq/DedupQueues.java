package dev.dedup.rabbitmq;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The names and settings of one work queue and the two queues beside it that {@link IdempotentDeliverCallback}
 * settles deliveries into:
 *
 * <ul>
 *   <li>{@code <queue>}: the work queue, with {@code x-dead-letter-exchange = <queue>.dlx};</li>
 *   <li>{@code <queue>.retry}: no consumer; {@code x-message-ttl = retryDelay} and a dead-letter route back to
 *       {@code <queue>} through the default exchange, so a message parked there returns after the delay;</li>
 *   <li>{@code <queue>.dlx}, a fanout exchange, bound to {@code <queue>.dead}: where rejected messages rest.</li>
 * </ul>
 *
 * <p>The delay is a queue-wide TTL, not a per-message one, so every parked message has the same delay and none waits
 * behind a longer-lived one at the head of the queue.
 */
public final class DedupQueues {
    private static final Duration MAX_DELAY = Duration.ofDays(1);

    private final String queue;
    private final Duration retryDelay;

    private DedupQueues(String queue, Duration retryDelay) {
        this.queue = queue;
        this.retryDelay = retryDelay;
    }

    /**
     * The topology around work queue {@code queue}, with a retry delay of 2 seconds.
     *
     * @param queue the work queue's name: 1 to 200 characters, so the derived names fit AMQP's 255-byte limit
     * @return the topology's names and settings; nothing is declared yet
     */
    public static DedupQueues named(String queue) {
        Objects.requireNonNull(queue, "queue");
        if (queue.isBlank() || queue.length() > 200 || queue.startsWith("amq.")) {
            throw new IllegalArgumentException("queue must be 1 to 200 characters, not blank and not starting with"
                    + " 'amq.' (reserved by the broker), but was '" + queue + "'");
        }
        return new DedupQueues(queue, Duration.ofSeconds(2));
    }

    /**
     * The same topology with another retry delay: how long a message waits in the retry queue before it returns.
     *
     * @param delay from 1 ms to 1 day
     * @return a copy with the new delay
     */
    public DedupQueues retryDelay(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.toMillis() < 1 || delay.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException("retryDelay must be from 1 ms to 1 day, but was " + delay);
        }
        return new DedupQueues(queue, delay);
    }

    /**
     * Declares the four objects, durable, on {@code channel}. Idempotent for the same settings; the broker refuses
     * (and closes the channel) when a queue of the same name exists with other arguments, for example a work queue
     * declared earlier without a dead-letter exchange: delete it, or set the dead-letter exchange by policy.
     *
     * @param channel an open channel
     * @return this topology, to chain
     * @throws IOException when the broker refuses a declaration
     */
    public DedupQueues declare(Channel channel) throws IOException {
        channel.exchangeDeclare(deadLetterExchange(), BuiltinExchangeType.FANOUT, true);
        channel.queueDeclare(deadLetterQueue(), true, false, false, null);
        channel.queueBind(deadLetterQueue(), deadLetterExchange(), "");
        channel.queueDeclare(queue, true, false, false, Map.of("x-dead-letter-exchange", deadLetterExchange()));
        // Expired messages go to the default exchange, whose routing key is a queue name: back to the work queue.
        channel.queueDeclare(retryQueue(), true, false, false, Map.of(
                "x-message-ttl", retryDelay.toMillis(),
                "x-dead-letter-exchange", "",
                "x-dead-letter-routing-key", queue));
        return this;
    }

    /**
     * Deletes the four objects and every message in them: for tests and decommissioning.
     *
     * @param channel an open channel
     * @throws IOException when the broker refuses a deletion
     */
    public void delete(Channel channel) throws IOException {
        channel.queueDelete(queue);
        channel.queueDelete(retryQueue());
        channel.queueDelete(deadLetterQueue());
        channel.exchangeDelete(deadLetterExchange());
    }

    /**
     * The work queue.
     *
     * @return its name
     */
    public String queue() {
        return queue;
    }

    /**
     * The queue where messages wait out the retry delay.
     *
     * @return {@code <queue>.retry}
     */
    public String retryQueue() {
        return queue + ".retry";
    }

    /**
     * The work queue's dead-letter exchange.
     *
     * @return {@code <queue>.dlx}
     */
    public String deadLetterExchange() {
        return queue + ".dlx";
    }

    /**
     * The queue bound to the dead-letter exchange.
     *
     * @return {@code <queue>.dead}
     */
    public String deadLetterQueue() {
        return queue + ".dead";
    }

    /**
     * How long a message waits in the retry queue.
     *
     * @return the delay
     */
    public Duration retryDelay() {
        return retryDelay;
    }

    @Override
    public String toString() {
        return "DedupQueues[" + queue + ", retryDelay=" + retryDelay + "]";
    }
}
