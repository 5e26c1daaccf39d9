package dev.dedup.spring.boot;

import java.time.Duration;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.DefaultAfterRollbackProcessor;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.FixedBackOff;

/**
 * What {@link IdempotentKafkaErrorHandler} is for containers that run each delivery in a Kafka transaction
 * ({@code spring.kafka.producer.transaction-id-prefix}): there a failed listener call rolls back, and the
 * after-rollback processor decides whether the record comes again. Spring Kafka's default gives up after nine
 * retries, which would skip a record whose key another consumer holds; this one retries held keys and store outages
 * without a limit, and recovers final answers at once. The starter sets it on Boot's listener container factory
 * unless the application defines its own {@code AfterRollbackProcessor}.
 */
public class IdempotentKafkaAfterRollbackProcessor extends DefaultAfterRollbackProcessor<Object, Object> {

    /** Spring Kafka's defaults (log the record after nine immediate retries), and a held key retried every second. */
    public IdempotentKafkaAfterRollbackProcessor() {
        this(null, new FixedBackOff(0, 9), Duration.ofSeconds(1));
    }

    /**
     * An after-rollback processor with a recoverer and a back-off of the application's.
     *
     * @param recoverer takes the records that failed for good; null logs them
     * @param backOff how a record whose method threw is retried before it is recovered
     * @param inProgressRetry how often a record whose key another consumer holds is tried again; positive
     * @throws IllegalArgumentException if {@code inProgressRetry} is not positive
     */
    public IdempotentKafkaAfterRollbackProcessor(BiConsumer<ConsumerRecord<?, ?>, Exception> recoverer,
            BackOff backOff, Duration inProgressRetry) {
        super(recoverer, backOff);
        IdempotentKafkaErrorHandler.classify(this,
                IdempotentKafkaErrorHandler.checkedInProgressRetry(inProgressRetry));
    }
}
