package dev.dedup.kafka;

import dev.dedup.DedupKeys;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Finds a record's dedup key. Use a producer-set header ({@link #header()}, the default) or a business key
 * ({@link #of}); {@link #topicPartitionOffset()} only where neither exists, knowing its limit.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface RecordKeys<K, V> {
    /** The header the producer sets to a unique message id, unless told otherwise. */
    String DEFAULT_HEADER = "message-id";

    /**
     * The dedup key of {@code record}.
     *
     * @param record a record as the consumer received it
     * @return its key, never null or empty
     * @throws MissingKeyException when the record carries no key
     */
    String keyOf(ConsumerRecord<K, V> record);

    /**
     * The UTF-8 value of the last {@value #DEFAULT_HEADER} header: the id the producer gave the message, the same on
     * every publish and redelivery of it.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @return keys from the {@value #DEFAULT_HEADER} header
     */
    static <K, V> RecordKeys<K, V> header() {
        return header(DEFAULT_HEADER);
    }

    /**
     * The UTF-8 value of the last header named {@code name}; a record without it, or with an empty one, is a
     * {@link MissingKeyException}.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param name the header's name
     * @return keys from that header
     */
    static <K, V> RecordKeys<K, V> header(String name) {
        Objects.requireNonNull(name, "name");
        return record -> {
            Header header = record.headers().lastHeader(name);
            if (header == null || header.value() == null || header.value().length == 0) {
                throw new MissingKeyException("record " + where(record) + " has no " + name + " header"
                        + (header == null ? "" : " value"));
            }
            return new String(header.value(), StandardCharsets.UTF_8);
        };
    }

    /**
     * A business key, such as an order id and its event type, from the record's key, value or headers. Two records
     * with the same business key take effect once between them. A null or empty key is a
     * {@link MissingKeyException}; use {@link DedupKeys#of} to join several parts.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @param keyFunction the business key of a record
     * @return keys from that function
     */
    static <K, V> RecordKeys<K, V> of(Function<? super ConsumerRecord<K, V>, String> keyFunction) {
        Objects.requireNonNull(keyFunction, "keyFunction");
        return record -> {
            String key = keyFunction.apply(record);
            if (key == null || key.isEmpty()) {
                throw new MissingKeyException("the key function found no key for record " + where(record));
            }
            return key;
        };
    }

    /**
     * The record's place, {@code topic/partition/offset}: opt in only when the producer sets no id and there is no
     * business key. It dedups redeliveries of one stored record, never two publishes of one message, and it collides
     * after the topic is deleted and re-created (offsets start again at 0) while the old keys are still retained:
     * those new records are then skipped as already processed.
     *
     * @param <K> the record key type
     * @param <V> the record value type
     * @return keys from the record's topic, partition and offset
     */
    static <K, V> RecordKeys<K, V> topicPartitionOffset() {
        return record -> DedupKeys.of(record.topic(), Integer.toString(record.partition()),
                Long.toString(record.offset()));
    }

    /**
     * Where a record lives, for messages: {@code topic-partition@offset}.
     *
     * @param record the record
     * @return its topic, partition and offset
     */
    static String where(ConsumerRecord<?, ?> record) {
        return record.topic() + "-" + record.partition() + "@" + record.offset();
    }
}
