package dev.dedup.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ResultCodec;
import dev.dedup.memory.InMemoryDedupStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Facade outcomes counted through {@code onOutcome}, one counter per outcome. */
class OutcomeMetricsTest {
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final DedupStore store = MeteredDedupStore.wrap(new InMemoryDedupStore("outcomes"), registry);
    private final IdempotentConsumer<String, String> consumer =
            IdempotentConsumer.builder(store, (String key) -> key, ResultCodec.utf8())
                    .keepKeyOn(e -> e instanceof IllegalArgumentException)
                    .onOutcome(OutcomeMetrics.counting(registry, "orders"))
                    .build();

    private double outcomes(String outcome) {
        return registry.get("dedup.outcomes").tags("consumer", "orders", "outcome", outcome).counter().count();
    }

    @Test
    @DisplayName("a key reused with another payload fingerprint is counted as key_reused, not as lease_lost")
    void countsAReusedKey() {
        IdempotentConsumer<String, String> fingerprinted =
                IdempotentConsumer.builder(store, (String message) -> message.split("=")[0], ResultCodec.utf8())
                        .fingerprint(message -> message.getBytes(StandardCharsets.UTF_8))
                        .onOutcome(OutcomeMetrics.counting(registry, "orders"))
                        .build();

        fingerprinted.process("k=1", message -> "done");
        fingerprinted.process("k=2", message -> "never");

        assertThat(outcomes("processed")).isEqualTo(1);
        assertThat(outcomes("key_reused")).isEqualTo(1);
        assertThat(registry.find("dedup.outcomes").tags("outcome", "lease_lost").counter()).isNull();
    }

    @Test
    @DisplayName("every outcome is counted under its own name")
    void countsEveryOutcome() {
        consumer.process("a", key -> "done");
        consumer.process("a", key -> "again");
        consumer.process("b", key -> {
            throw new IllegalStateException("retry me");
        });
        consumer.process("c", key -> {
            throw new IllegalArgumentException("declined");
        });
        consumer.process("c", key -> "never");
        store.claim("d", Duration.ofMinutes(1));
        consumer.process("d", key -> "busy");

        assertThat(outcomes("processed")).isEqualTo(1);
        assertThat(outcomes("already_processed")).isEqualTo(1);
        assertThat(outcomes("failed")).isEqualTo(1);
        assertThat(outcomes("failed_key_kept")).isEqualTo(1);
        assertThat(outcomes("already_failed")).isEqualTo(1);
        assertThat(outcomes("in_progress_elsewhere")).isEqualTo(1);
        assertThat(MeteredDedupStore.kindOf(new InMemoryDedupStore())).isEqualTo("inmemory");
    }
}
