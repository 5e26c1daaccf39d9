package dev.dedup.kafka;

import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A record that will never take effect, handed to the {@link DeadLetterHandler} before its offset is committed past.
 *
 * @param <K> the record key type
 * @param <V> the record value type
 * @param record the record as it was consumed
 * @param reason why it cannot take effect
 * @param key its dedup key; empty for {@link Reason#NO_KEY}
 * @param error a description of the failure: the exception's for {@link Reason#NO_KEY} and {@link Reason#FAILED},
 *     the stored one (empty if none was stored) for {@link Reason#ALREADY_FAILED}, what was reused for
 *     {@link Reason#KEY_REUSED}
 * @param cause the exception, where this delivery saw one (not for {@link Reason#ALREADY_FAILED} nor
 *     {@link Reason#KEY_REUSED})
 */
public record DeadLetter<K, V>(ConsumerRecord<K, V> record, Reason reason, Optional<String> key,
        Optional<String> error, Optional<Throwable> cause) {

    /**
     * Checks that no part is null.
     *
     * @param record the record as it was consumed
     * @param reason why it cannot take effect
     * @param key its dedup key, or empty
     * @param error a description of the failure, or empty
     * @param cause the exception, or empty
     */
    public DeadLetter {
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(cause, "cause");
    }

    /** Why a record goes to the dead letters. */
    public enum Reason {
        /** The record has no dedup key ({@link MissingKeyException}, or the key function threw). */
        NO_KEY,
        /** The handler failed here with a failure judged non-retryable; its key is stored as failed. */
        FAILED,
        /** A redelivery of a record whose key was stored as failed before: the handler did not run. */
        ALREADY_FAILED,
        /**
         * Another record with a different payload fingerprint holds the key (see
         * {@link KafkaRecordProcessor.Builder#fingerprint}): the handler did not run and nothing was replayed.
         */
        KEY_REUSED
    }
}
