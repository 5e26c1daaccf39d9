package dev.dedup.kafka;

import dev.dedup.ProcessingOutcome;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * What the processor did with one record of a poll.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param <R> the handler's result type
 * @param record the record
 * @param outcome what the idempotent consumer reported for it
 * @param disposition what that means for the record's offset
 */
public record RecordOutcome<K, V, R>(ConsumerRecord<K, V> record, ProcessingOutcome<R> outcome,
        Disposition disposition) {

    /**
     * Checks that no part is null.
     *
     * @param record the record
     * @param outcome what the idempotent consumer reported for it
     * @param disposition what that means for the record's offset
     */
    public RecordOutcome {
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(disposition, "disposition");
    }

    /** What an outcome means for the record's offset. */
    public enum Disposition {
        /** Took effect, here or before (a lost lease included): the offset may pass it. */
        DONE,
        /** Handed to the dead letters, which stored it: the offset may pass it. */
        DEAD_LETTERED,
        /** Must come again: the partition was rewound to it, and nothing from it on was committed. */
        REDELIVER
    }
}
