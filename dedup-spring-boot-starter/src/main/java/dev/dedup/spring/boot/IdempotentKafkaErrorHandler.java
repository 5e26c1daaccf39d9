package dev.dedup.spring.boot;

import dev.dedup.DedupStoreException;
import java.time.Duration;
import java.util.Objects;
import org.springframework.kafka.listener.ConsumerRecordRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.FailedRecordProcessor;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.ExponentialBackOff;
import org.springframework.util.backoff.FixedBackOff;

/**
 * The container error handler for {@link Idempotent} {@code @KafkaListener} methods; the starter sets it on Boot's
 * listener container factory unless the application defines its own {@code CommonErrorHandler} (which must then be
 * one of these, built with its own recoverer and back-off). Containers in Kafka transactions hand failures to their
 * after-rollback processor instead, {@link IdempotentKafkaAfterRollbackProcessor}, which decides the same way:
 *
 * <ul>
 *   <li>{@link IdempotentCallInProgressException}, another consumer holds the key: retried every
 *       {@code inProgressRetry}, without a limit, never recovered past. The holder completes the key (the retry
 *       replays) or its lease lapses (the retry runs the method), so the wait ends within one lease.</li>
 *   <li>{@code DedupStoreException}, the store could not be reached, so the method did not run: retried with a back-off
 *       up to 10 s, without a limit; an outage is not a failed attempt of the record.</li>
 *   <li>{@link IdempotentCallFailedException}, {@link IdempotencyKeyReusedException} and
 *       {@link IdempotentResultUnavailableException}, final answers: not retried, straight to the recoverer.</li>
 *   <li>any other exception, the method's own: retried with {@code backOff}, then recovered, as Spring Kafka
 *       does.</li>
 * </ul>
 */
public class IdempotentKafkaErrorHandler extends DefaultErrorHandler {
    /** Spring Kafka's own default: nine retries, at once. */
    private static final BackOff SPRING_KAFKA_DEFAULT = new FixedBackOff(0, 9);

    /** Spring Kafka's defaults (log the record after nine immediate retries), and a held key retried every second. */
    public IdempotentKafkaErrorHandler() {
        this(null, SPRING_KAFKA_DEFAULT, Duration.ofSeconds(1));
    }

    /**
     * An error handler with a recoverer and a back-off of the application's.
     *
     * @param recoverer takes the records that failed for good, usually a {@code DeadLetterPublishingRecoverer}; null
     *     logs them
     * @param backOff how a record whose method threw is retried before it is recovered
     * @param inProgressRetry how often a record whose key another consumer holds is tried again; positive
     * @throws IllegalArgumentException if {@code inProgressRetry} is not positive
     */
    public IdempotentKafkaErrorHandler(ConsumerRecordRecoverer recoverer, BackOff backOff, Duration inProgressRetry) {
        super(recoverer, Objects.requireNonNull(backOff, "backOff"));
        classify(this, checkedInProgressRetry(inProgressRetry));
    }

    /**
     * Sets the classification and the back-offs of the class comment on a handler or an after-rollback processor.
     */
    static void classify(FailedRecordProcessor processor, Duration inProgressRetry) {
        BackOff whileHeld = new FixedBackOff(inProgressRetry.toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS);
        processor.addRetryableExceptions(IdempotentCallInProgressException.class, DedupStoreException.class);
        processor.addNotRetryableExceptions(IdempotentCallFailedException.class, IdempotencyKeyReusedException.class,
                IdempotentResultUnavailableException.class);
        processor.setBackOffFunction((record, failure) -> {
            if (causedBy(failure, IdempotentCallInProgressException.class)) {
                return whileHeld;
            }
            return causedBy(failure, DedupStoreException.class) ? whileStoreDown() : null;
        });
    }

    /** {@return the retry interval of a held key, checked: positive} */
    static Duration checkedInProgressRetry(Duration inProgressRetry) {
        Objects.requireNonNull(inProgressRetry, "inProgressRetry");
        if (inProgressRetry.isNegative() || inProgressRetry.isZero()) {
            throw new IllegalArgumentException("inProgressRetry must be positive, but was " + inProgressRetry);
        }
        return inProgressRetry;
    }

    private static BackOff whileStoreDown() {
        ExponentialBackOff backOff = new ExponentialBackOff(200, 2);
        backOff.setMaxInterval(10_000);
        return backOff;   // no maximum elapsed time: until the store answers
    }

    /** Whether {@code type} is in the cause chain: the container wraps what the listener threw. */
    private static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (type.isInstance(cause)) {
                return true;
            }
        }
        return false;
    }
}
