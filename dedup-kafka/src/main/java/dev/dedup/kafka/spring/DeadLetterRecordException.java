package dev.dedup.kafka.spring;

import dev.dedup.DedupException;
import dev.dedup.kafka.DeadLetter;
import java.util.Objects;
import java.util.Optional;

/**
 * A record that will never take effect: it has no key, its handler failed with a failure kept as final
 * ({@code keepKeyOn}), or its key was stored as failed before. Not retryable: {@link DedupErrorHandler} marks it so,
 * and the error handler hands the record to its recoverer (a {@code DeadLetterPublishingRecoverer}) at once, then
 * commits past it. The handler's failure, where this delivery saw one, is the {@link #getCause() cause}.
 */
public class DeadLetterRecordException extends DedupException {
    private static final long serialVersionUID = 1L;

    /** Why the record cannot take effect. */
    private final DeadLetter.Reason reason;
    /** Its dedup key, or null when it has none. */
    private final String key;
    /** A description of the failure, or null. */
    private final String error;

    /**
     * A record for the dead letters.
     *
     * @param where the record's {@code topic-partition@offset}
     * @param reason why it cannot take effect
     * @param key its dedup key, or null for {@link DeadLetter.Reason#NO_KEY}
     * @param error a description of the failure, or null: the exception's, the stored one for
     *     {@link DeadLetter.Reason#ALREADY_FAILED}, or what was reused for {@link DeadLetter.Reason#KEY_REUSED}
     * @param cause the exception this delivery saw, or null
     */
    public DeadLetterRecordException(String where, DeadLetter.Reason reason, String key, String error,
            Throwable cause) {
        super("record " + where + " cannot take effect (" + Objects.requireNonNull(reason, "reason")
                + (key == null ? "" : ", key " + key) + ")" + (error == null ? "" : ": " + error), cause);
        this.reason = reason;
        this.key = key;
        this.error = error;
    }

    /**
     * Why the record cannot take effect.
     *
     * @return the reason, as {@link dev.dedup.kafka.DeadLetterTopic} names it in its reason header
     */
    public DeadLetter.Reason reason() {
        return reason;
    }

    /**
     * The record's dedup key.
     *
     * @return the key, empty for {@link DeadLetter.Reason#NO_KEY}
     */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /**
     * A description of the failure.
     *
     * @return the exception's description, or the stored one for {@link DeadLetter.Reason#ALREADY_FAILED} (empty
     *     when none was stored)
     */
    public Optional<String> error() {
        return Optional.ofNullable(error);
    }
}
