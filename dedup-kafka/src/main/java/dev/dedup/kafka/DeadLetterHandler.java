package dev.dedup.kafka;

/**
 * Takes the records that will never take effect. The processor commits past a record only after this returns; if it
 * throws, the partition is rewound to the record, which comes again (and is handed here again).
 *
 * @param <K> the record key type
 * @param <V> the record value type
 */
@FunctionalInterface
public interface DeadLetterHandler<K, V> {
    /**
     * Stores or forwards one dead letter durably before returning.
     *
     * @param letter the record and why it cannot take effect
     * @throws Exception when the dead letter could not be stored; the record is then redelivered
     */
    void deadLetter(DeadLetter<K, V> letter) throws Exception;
}
