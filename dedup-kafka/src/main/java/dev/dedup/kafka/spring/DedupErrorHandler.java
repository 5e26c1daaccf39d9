package dev.dedup.kafka.spring;

import dev.dedup.kafka.DeadLetterTopic;
import dev.dedup.kafka.RecordKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BiFunction;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.ExponentialBackOff;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The container error handler that {@link IdempotentRecordListener} and {@link IdempotentBatchListener} need (the
 * latter reports its record with a {@code BatchListenerFailedException} whose cause is classified as below):
 *
 * <pre>{@code
 * var recoverer = new DeadLetterPublishingRecoverer(template);      // to <topic>-dlt, same partition
 * recoverer.setHeadersFunction(DedupErrorHandler.deadLetterHeaders());
 * factory.setCommonErrorHandler(DedupErrorHandler.create(recoverer,
 *         new FixedBackOff(1_000, 9), Duration.ofSeconds(1)));
 * }</pre>
 *
 * <ul>
 *   <li>{@link DeadLetterRecordException} is not retryable: the record goes to the recoverer at once, and is
 *       committed past once the recoverer returns (a recoverer that throws has the record retried, and a record whose
 *       key was kept comes back as {@code AlreadyFailed} and goes to it again);
 *   <li>{@link RecordFailedException} is retried with {@code failureBackOff}; when that is exhausted, the record goes
 *       to the recoverer like any failed record of Spring Kafka (use {@link FixedBackOff#UNLIMITED_ATTEMPTS} to never
 *       give up on it);
 *   <li>{@link KeyInProgressException} is retried every {@code inProgressRetry}, without a limit: the holder completes
 *       the key or its lease lapses, so the wait ends within one lease, and the record is never dead-lettered for it;
 *   <li>{@link StoreUnavailableException}, a claim that failed before the handler ran, is retried with a back-off up
 *       to 10 s, without a limit: a store outage is not an attempt, and never sends a record to the dead letters.
 * </ul>
 *
 * <p>Both retryable exceptions are classified by their own type, never by their cause's: a handler failure that Spring
 * Kafka would not retry (a {@code ClassCastException}, say) stays retryable unless {@code keepKeyOn} keeps it.
 */
public final class DedupErrorHandler {
    private DedupErrorHandler() {}

    /**
     * A {@link DefaultErrorHandler} that retries what must come again and recovers what never can.
     *
     * @param recoverer takes the records that will never take effect, usually a
     *     {@code DeadLetterPublishingRecoverer}; it must store a record durably before returning
     * @param failureBackOff how a record whose handler failed retryably is retried, for example
     *     {@code new FixedBackOff(1_000, 9)}
     * @param inProgressRetry how often a record whose key is held elsewhere is tried again; positive
     * @return the error handler, to set with {@code setCommonErrorHandler}
     * @throws IllegalArgumentException when {@code inProgressRetry} is not positive
     */
    public static DefaultErrorHandler create(ConsumerRecordRecoverer recoverer, BackOff failureBackOff,
            Duration inProgressRetry) {
        Objects.requireNonNull(recoverer, "recoverer");
        Objects.requireNonNull(failureBackOff, "failureBackOff");
        Objects.requireNonNull(inProgressRetry, "inProgressRetry");
        if (inProgressRetry.isNegative() || inProgressRetry.isZero()) {
            throw new IllegalArgumentException("inProgressRetry must be positive, but was " + inProgressRetry);
        }
        BackOff whileHeld = new FixedBackOff(inProgressRetry.toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS);
        DefaultErrorHandler handler = new DefaultErrorHandler(recoverer, failureBackOff);
        handler.addRetryableExceptions(RecordFailedException.class, KeyInProgressException.class,
                StoreUnavailableException.class);
        handler.addNotRetryableExceptions(DeadLetterRecordException.class);
        handler.setBackOffFunction((record, failure) -> {
            if (find(failure, KeyInProgressException.class) != null) {
                return whileHeld;
            }
            return find(failure, StoreUnavailableException.class) != null ? whileStoreDown() : null;
        });
        return handler;
    }

    /** Until the store answers: an outage is not an attempt of the record, whose handler did not run. */
    private static BackOff whileStoreDown() {
        ExponentialBackOff backOff = new ExponentialBackOff(200, 2);
        backOff.setMaxInterval(10_000);
        return backOff;
    }

    /**
     * Headers for a {@code DeadLetterPublishingRecoverer}'s {@code setHeadersFunction}: for a
     * {@link DeadLetterRecordException}, the ones {@link DeadLetterTopic} writes
     * ({@value DeadLetterTopic#REASON_HEADER}, {@value DeadLetterTopic#ERROR_HEADER},
     * {@value DeadLetterTopic#ORIGIN_HEADER}), next to Spring Kafka's own.
     *
     * @return a function that gives the dedup headers of a dead letter, or null for a record that failed otherwise
     */
    public static BiFunction<ConsumerRecord<?, ?>, Exception, Headers> deadLetterHeaders() {
        return (record, failure) -> {
            DeadLetterRecordException letter = find(failure, DeadLetterRecordException.class);
            if (letter == null) {
                return null;
            }
            Headers headers = new RecordHeaders();
            headers.add(DeadLetterTopic.REASON_HEADER, utf8(letter.reason().name()));
            letter.error().ifPresent(error -> headers.add(DeadLetterTopic.ERROR_HEADER, utf8(error)));
            headers.add(DeadLetterTopic.ORIGIN_HEADER, utf8(RecordKeys.where(record)));
            return headers;
        };
    }

    /** The first exception of {@code type} in the cause chain: the container wraps the listener's exception. */
    private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (type.isInstance(cause)) {
                return type.cast(cause);
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
