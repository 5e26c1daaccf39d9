package dev.dedup.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Dead letters to a Kafka topic, {@code <topic>.DLT} by default: the record's key, value and headers, plus headers
 * that say why and where it came from ({@value #REASON_HEADER}, {@value #ERROR_HEADER}, {@value #ORIGIN_HEADER}).
 * Each send waits for the broker's acknowledgement, so the consumer's offset never passes a dead letter that was not
 * stored. The producer stays the caller's to configure and close.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
public final class DeadLetterTopic<K, V> implements DeadLetterHandler<K, V> {
    /** The header that names the {@link DeadLetter.Reason}. */
    public static final String REASON_HEADER = "dedup-dead-letter-reason";
    /** The header with the failure's description, when there is one. */
    public static final String ERROR_HEADER = "dedup-dead-letter-error";
    /** The header with the original record's {@code topic-partition@offset}. */
    public static final String ORIGIN_HEADER = "dedup-dead-letter-origin";

    private final Producer<K, V> producer;
    private final Function<ConsumerRecord<K, V>, String> topicOf;

    /**
     * Dead letters to {@code <topic>.DLT}, the topic of each record with {@code .DLT} appended.
     *
     * @param producer a producer for the records' key and value types
     */
    public DeadLetterTopic(Producer<K, V> producer) {
        this(producer, record -> record.topic() + ".DLT");
    }

    /**
     * Dead letters to the topic {@code topicOf} names for each record.
     *
     * @param producer a producer for the records' key and value types
     * @param topicOf the dead-letter topic of a record
     */
    public DeadLetterTopic(Producer<K, V> producer, Function<ConsumerRecord<K, V>, String> topicOf) {
        this.producer = Objects.requireNonNull(producer, "producer");
        this.topicOf = Objects.requireNonNull(topicOf, "topicOf");
    }

    @Override
    public void deadLetter(DeadLetter<K, V> letter) throws Exception {
        ConsumerRecord<K, V> record = letter.record();
        Headers headers = new RecordHeaders(record.headers().toArray());
        headers.add(REASON_HEADER, utf8(letter.reason().name()));
        letter.error().ifPresent(error -> headers.add(ERROR_HEADER, utf8(error)));
        headers.add(ORIGIN_HEADER, utf8(RecordKeys.where(record)));
        producer.send(new ProducerRecord<>(topicOf.apply(record), null, record.key(), record.value(), headers)).get();
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
