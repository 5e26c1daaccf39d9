package dev.dedup.micrometer;

import dev.dedup.ProcessingOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;

/**
 * Counts {@link dev.dedup.IdempotentConsumer} outcomes as {@code dedup.outcomes}, tag {@code outcome}:
 * {@code processed}, {@code already_processed}, {@code already_failed}, {@code in_progress_elsewhere},
 * {@code failed}, {@code failed_key_kept}, {@code key_reused}, {@code lease_lost}. Plug it in with
 * {@code IdempotentConsumer.builder(...).onOutcome(OutcomeMetrics.counting(registry, "orders"))}.
 */
public final class OutcomeMetrics implements Consumer<ProcessingOutcome<?>> {
    private final MeterRegistry registry;
    private final Tags tags;
    /** One counter per outcome name, registered on first use, then only looked up here. */
    private final ConcurrentMap<String, Counter> counters = new ConcurrentHashMap<>();

    private OutcomeMetrics(MeterRegistry registry, Tags tags) {
        this.registry = registry;
        this.tags = tags;
    }

    /**
     * A listener for {@code IdempotentConsumer.Builder.onOutcome} that counts outcomes.
     *
     * @param registry where the counters go
     * @param consumer the value of the {@code consumer} tag, naming the consumer (for example its queue)
     * @return the listener
     */
    public static OutcomeMetrics counting(MeterRegistry registry, String consumer) {
        return new OutcomeMetrics(Objects.requireNonNull(registry, "registry"),
                Tags.of("consumer", Objects.requireNonNull(consumer, "consumer")));
    }

    @Override
    public void accept(ProcessingOutcome<?> outcome) {
        counters.computeIfAbsent(nameOf(outcome), name -> Counter.builder("dedup.outcomes")
                .description("Deliveries processed by an idempotent consumer, by outcome")
                .tags(tags).tag("outcome", name)
                .register(registry))
                .increment();
    }

    static String nameOf(ProcessingOutcome<?> outcome) {
        if (outcome instanceof ProcessingOutcome.Processed) {
            return "processed";
        }
        if (outcome instanceof ProcessingOutcome.AlreadyProcessed) {
            return "already_processed";
        }
        if (outcome instanceof ProcessingOutcome.AlreadyFailed) {
            return "already_failed";
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere) {
            return "in_progress_elsewhere";
        }
        if (outcome instanceof ProcessingOutcome.Failed<?> failed) {
            return failed.keyKept() ? "failed_key_kept" : "failed";
        }
        if (outcome instanceof ProcessingOutcome.KeyReused) {
            return "key_reused";
        }
        return "lease_lost";
    }
}
