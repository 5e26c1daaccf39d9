package dev.dedup.kafka;

import java.sql.Connection;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The business work for one record in the inbox mode ({@link KafkaRecordProcessor.Builder#inbox}): it writes through
 * {@code transaction}, the connection whose transaction also holds the batch's claims and completions, and never
 * commits, rolls back or closes it.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 */
@FunctionalInterface
public interface InboxHandler<K, V, R> {
    /**
     * Applies one record's database effect.
     *
     * @param record the record whose key this transaction claimed
     * @param transaction the partition batch's open transaction; write through it only
     * @return the result to store with the key, or null
     * @throws Exception a failure: the batch's transaction is rolled back, and its records run again one by one,
     *     where this failure is retried or kept as the processor's rules say
     */
    R handle(ConsumerRecord<K, V> record, Connection transaction) throws Exception;
}
