package dev.dedup.kafka.spring;

import dev.dedup.DedupException;
import dev.dedup.ProcessingOutcome;
import dev.dedup.kafka.DeadLetter;
import dev.dedup.kafka.RecordKeys;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The one rule of both Spring Kafka listeners for what an outcome asks of the container: nothing when the work is
 * done, else the exception {@link DedupErrorHandler} classifies (retry the record, or hand it to the recoverer).
 */
final class ListenerFailures {
    private ListenerFailures() {}

    /**
     * The exception for {@code record}'s outcome, or null when the container may commit past it ({@code Processed},
     * {@code AlreadyProcessed}, {@code LeaseLost}: the work is done, here or before).
     *
     * @param handlerRan whether the handler ran for the record in this delivery: a retryable failure before it ran
     *     is the store's ({@link StoreUnavailableException}), not an attempt of the record
     */
    static DedupException of(ConsumerRecord<?, ?> record, ProcessingOutcome<?> outcome, boolean handlerRan) {
        String where = RecordKeys.where(record);
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere<?> held) {
            return new KeyInProgressException(where, held.key(), held.leaseExpiresAt());
        }
        if (outcome instanceof ProcessingOutcome.AlreadyFailed<?> failed) {
            return new DeadLetterRecordException(where, DeadLetter.Reason.ALREADY_FAILED, failed.key(),
                    failed.error().orElse(null), null);
        }
        if (outcome instanceof ProcessingOutcome.KeyReused<?> reused) {
            return new DeadLetterRecordException(where, DeadLetter.Reason.KEY_REUSED, reused.key(),
                    "key " + reused.key() + " is held by a record with another payload fingerprint", null);
        }
        if (outcome instanceof ProcessingOutcome.Failed<?> failed) {
            if (failed.key() == null) {
                return new DeadLetterRecordException(where, DeadLetter.Reason.NO_KEY, null,
                        String.valueOf(failed.cause().getMessage()), failed.cause());
            }
            if (failed.keyKept()) {
                return new DeadLetterRecordException(where, DeadLetter.Reason.FAILED, failed.key(),
                        String.valueOf(failed.cause()), failed.cause());
            }
            if (!handlerRan) {
                return new StoreUnavailableException(where, failed.key(), failed.cause());
            }
            return new RecordFailedException(where, failed.key(), failed.cause());
        }
        return null;
    }
}
