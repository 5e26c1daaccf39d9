package dev.dedup.kafka;

import dev.dedup.MessageHandler;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link KafkaRecordProcessor.Builder#maxAttempts}: counts the handler's failures on the record each partition is
 * retrying, and has the failure of the last allowed attempt kept as final (key stored as failed, record
 * dead-lettered) instead of retried. Only a handler that ran and threw counts: a store failure before it ran never
 * reaches the counting handler. The counts live in memory, one per partition: a restart, or a rebalance that takes
 * the partition away, starts them again.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
final class AttemptLimit<K, V> {
    /** No limit: every retryable failure comes again (the default). */
    static final int UNLIMITED = Integer.MAX_VALUE;

    private static final Logger log = LoggerFactory.getLogger(AttemptLimit.class);

    /** The handler's failures so far on the record at {@code offset}. */
    private record Failures(long offset, int count) {}

    private final int maxAttempts;
    private final Map<TopicPartition, Failures> failures = new HashMap<>();
    /** Whether the handler run that just threw was the record's last allowed attempt; read by {@link #keepKeyOn}. */
    private boolean lastAttemptFailed;

    AttemptLimit(int maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    /** {@code handler}, counting each exception it throws against its record; itself when there is no limit. */
    <R> MessageHandler<? super ConsumerRecord<K, V>, ? extends R> counting(
            MessageHandler<? super ConsumerRecord<K, V>, ? extends R> handler) {
        if (maxAttempts == UNLIMITED) {
            return handler;
        }
        return record -> {
            lastAttemptFailed = false;
            try {
                return handler.handle(record);
            } catch (Exception e) {
                lastAttemptFailed = failed(record) >= maxAttempts;
                if (lastAttemptFailed) {
                    log.warn("record {} failed its {} attempts: its key is kept as failed, and it goes to the dead"
                            + " letters", RecordKeys.where(record), maxAttempts);
                }
                throw e;
            }
        };
    }

    /**
     * The processor's {@code keepKeyOn}: the user's, and the failure of a last attempt. The idempotent consumer asks
     * it right after the counting handler threw, on the same thread.
     */
    Predicate<Exception> keepKeyOn(Predicate<? super Exception> nonRetryable) {
        return failure -> lastAttemptFailed || nonRetryable.test(failure);
    }

    /** Forgets the count of a record that took effect or was dead-lettered. */
    void settled(TopicPartition partition, long offset) {
        Failures counted = failures.get(partition);
        if (counted != null && counted.offset() == offset) {
            failures.remove(partition);
        }
    }

    /** Forgets the counts of partitions this consumer no longer holds: their new owner starts from zero. */
    void forgetUnassigned(Supplier<Set<TopicPartition>> assignment) {
        if (!failures.isEmpty()) {
            failures.keySet().retainAll(assignment.get());
        }
    }

    private int failed(ConsumerRecord<K, V> record) {
        TopicPartition partition = new TopicPartition(record.topic(), record.partition());
        Failures before = failures.get(partition);
        int count = before != null && before.offset() == record.offset() ? before.count() + 1 : 1;
        failures.put(partition, new Failures(record.offset(), count));
        return count;
    }
}
