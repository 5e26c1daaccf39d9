package dev.dedup.outbox.kafka;

import dev.dedup.outbox.OutboxEvent;
import dev.dedup.outbox.OutboxPublishException;
import dev.dedup.outbox.OutboxPublisher;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes outbox events to Kafka: each event to the topic named by its destination, with its key as the record
 * key (so a key's events share a partition and keep their order), its headers, and its id as the
 * {@code message-id} header, which {@code dev.dedup.kafka.KafkaRecordProcessor} keys on by default. It sends the
 * whole batch, then waits for every acknowledgement.
 *
 * <p>It reports as {@linkplain OutboxPublishException#rejected() rejected}, for the relay to count and eventually
 * park, an event whose record is too large, whose topic is invalid or not authorised, and one whose topic the producer
 * found no metadata for (missing, the broker not creating topics) while the broker acknowledged another event of the
 * batch: without that, a missing topic cannot be told from an unreachable cluster. A batch's later events to a
 * topic that just timed out are not sent again in that batch: they fail the same way at once.
 *
 * <pre>{@code
 * try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.create(
 *         Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "kafka:9092"), Duration.ofSeconds(30))) {
 *     ...
 * }
 * }</pre>
 */
public final class KafkaOutboxPublisher implements OutboxPublisher, AutoCloseable {
    /** The longest {@code max.block.ms} {@link #create} sets when the config has none. */
    static final Duration DEFAULT_MAX_BLOCK = Duration.ofSeconds(5);

    private final Producer<String, byte[]> producer;
    private final Duration timeout;
    private final boolean ownsProducer;

    private KafkaOutboxPublisher(Producer<String, byte[]> producer, Duration timeout, boolean ownsProducer) {
        this.producer = producer;
        this.timeout = checked(timeout);
        this.ownsProducer = ownsProducer;
    }

    /**
     * A publisher with a producer of its own, configured from {@code config} plus what the outbox needs: idempotence
     * on ({@code enable.idempotence=true}, so the client's own retries neither duplicate nor reorder),
     * {@code acks=all}, and String keys with byte-array values. A setting in {@code config} that contradicts these
     * is refused. Unless {@code config} sets it, {@code max.block.ms} is the timeout, at most 5 s (the client's
     * default is 60 s): how long {@code send} waits for the metadata of a topic, so a missing topic holds a batch's
     * row locks no longer than that.
     *
     * @param config producer settings, at least {@code bootstrap.servers}
     * @param timeout how long {@link #publish} waits for the batch's acknowledgements, from 1 ms to 10 minutes
     * @return the publisher; closing it closes its producer
     * @throws IllegalArgumentException when {@code config} turns idempotence off or asks for fewer acks
     */
    public static KafkaOutboxPublisher create(Map<String, Object> config, Duration timeout) {
        Objects.requireNonNull(config, "config");
        Map<String, Object> settings = new HashMap<>(config);
        require(settings, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        require(settings, ProducerConfig.ACKS_CONFIG, "all");
        // send() blocks up to max.block.ms (60 s by default) for a topic without metadata, with the batch's row
        // locks held: a missing topic would stall each cycle that long.
        settings.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, Math.min(checked(timeout).toMillis(),
                DEFAULT_MAX_BLOCK.toMillis()));
        settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return new KafkaOutboxPublisher(new KafkaProducer<>(settings), timeout, true);
    }

    /**
     * A publisher on the application's producer, which it does not close. Configure the producer with
     * {@code enable.idempotence=true} and {@code acks=all}: with less, a confirmed event can be lost or reordered;
     * and with a short {@code max.block.ms} (a few seconds), or a missing topic holds each batch for its 60 s default.
     *
     * @param producer the producer, String keys and byte-array values
     * @param timeout how long {@link #publish} waits for the batch's acknowledgements, from 1 ms to 10 minutes
     * @return the publisher
     */
    public static KafkaOutboxPublisher on(Producer<String, byte[]> producer, Duration timeout) {
        return new KafkaOutboxPublisher(Objects.requireNonNull(producer, "producer"), timeout, false);
    }

    private static void require(Map<String, Object> settings, String name, String value) {
        Object given = settings.putIfAbsent(name, value);
        if (given != null && !value.equalsIgnoreCase(given.toString().trim())) {
            throw new IllegalArgumentException(name + " must be " + value + " for the outbox (a confirmed event must"
                    + " be stored once, in order), but was " + given);
        }
    }

    private static Duration checked(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.toMillis() < 1 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("timeout must be from 1 ms to 10 minutes, but was " + timeout);
        }
        return timeout;
    }

    @Override
    public void publish(List<OutboxEvent> events) {
        List<Future<RecordMetadata>> acks = new ArrayList<>(events.size());
        // Topics the producer found no metadata for within max.block.ms: a later event to one fails the same way,
        // without blocking the batch (and its row locks) once more.
        Map<String, RuntimeException> unknownTopics = new HashMap<>();
        RuntimeException sendFailure = null;
        for (OutboxEvent event : events) {
            RuntimeException unknown = unknownTopics.get(event.destination());
            if (unknown != null) {
                acks.add(CompletableFuture.failedFuture(unknown));
                continue;
            }
            try {
                Future<RecordMetadata> ack = producer.send(record(event));
                metadataTimeout(ack).ifPresent(timeout -> unknownTopics.put(event.destination(), timeout));
                acks.add(ack);
            } catch (RuntimeException e) {
                // The producer refused synchronously (closed, buffer full past max.block.ms): send nothing after it.
                sendFailure = e;
                break;
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Set<String> confirmed = new LinkedHashSet<>();
        Map<OutboxEvent, Throwable> failed = new LinkedHashMap<>();
        boolean anyAcknowledged = false;
        Throwable firstFailure = sendFailure;
        String failedId = sendFailure == null ? null : events.get(acks.size()).messageId();
        // An event acknowledged after an earlier one of its key failed is not reported as confirmed: marked, it
        // would leave the earlier one to be published after it. It goes again, after the earlier one, as a duplicate.
        Set<String> failedKeys = new HashSet<>();
        for (int i = 0; i < acks.size(); i++) {
            OutboxEvent event = events.get(i);
            try {
                acks.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                anyAcknowledged = true;
                if (event.key() == null || !failedKeys.contains(event.key())) {
                    confirmed.add(event.messageId());
                }
            } catch (ExecutionException | TimeoutException e) {
                if (event.key() != null) {
                    failedKeys.add(event.key());
                }
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                failed.put(event, cause);
                if (firstFailure == null || failedId == null) {
                    firstFailure = cause;
                    failedId = event.messageId();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                firstFailure = e;
                failedId = events.get(i).messageId();
                break;
            }
        }
        if (confirmed.size() < events.size()) {
            throw new OutboxPublishException("Kafka did not acknowledge " + (events.size() - confirmed.size())
                    + " of " + events.size() + " events (or acknowledged them after an earlier event of their key"
                    + " failed); first unacknowledged message-id " + failedId + ": "
                    + firstFailure, confirmed, rejected(failed, unknownTopics.keySet(), anyAcknowledged),
                    firstFailure);
        }
    }

    /** The producer's refusal at {@code send}: no metadata for the topic within max.block.ms. */
    private static Optional<RuntimeException> metadataTimeout(Future<RecordMetadata> ack) {
        if (!ack.isDone()) {
            return Optional.empty();
        }
        try {
            ack.get();
            return Optional.empty();
        } catch (ExecutionException e) {
            // A full buffer is a TimeoutException too (BufferExhaustedException): the producer's state, not the
            // topic's.
            return e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException timeout
                    && !(timeout instanceof BufferExhaustedException) ? Optional.of(timeout) : Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * The failures that are the event's own. Some errors always are: the record too large, the topic's name invalid
     * or not authorised. A topic the producer found no metadata for (missing, with auto-creation off) looks like an
     * outage from the producer, so it counts only when the broker acknowledged another event of the same batch.
     */
    private static Map<String, String> rejected(Map<OutboxEvent, Throwable> failed, Set<String> unknownTopics,
            boolean anyAcknowledged) {
        Map<String, String> rejected = new HashMap<>();
        failed.forEach((event, cause) -> {
            boolean unknownTopic = unknownTopics.contains(event.destination())
                    || cause instanceof UnknownTopicOrPartitionException;
            if (cause instanceof RecordTooLargeException || cause instanceof RecordBatchTooLargeException
                    || cause instanceof InvalidTopicException || cause instanceof TopicAuthorizationException
                    || cause instanceof InvalidRecordException || unknownTopic && anyAcknowledged) {
                rejected.put(event.messageId(), cause.toString());
            }
        });
        return rejected;
    }

    private static ProducerRecord<String, byte[]> record(OutboxEvent event) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(event.destination(), event.key(),
                event.payload());
        event.headers().forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        record.headers().add(OutboxEvent.MESSAGE_ID_HEADER, event.messageId().getBytes(StandardCharsets.UTF_8));
        return record;
    }

    /** Closes the producer when this publisher created it; a producer passed to {@link #on} stays open. */
    @Override
    public void close() {
        if (ownsProducer) {
            producer.close(timeout);
        }
    }
}
