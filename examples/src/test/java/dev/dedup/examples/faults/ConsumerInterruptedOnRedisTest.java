package dev.dedup.examples.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.tck.TestServers;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Interrupted consumer threads on the real Redis: Lettuce's blocking calls fail at once on an interrupted thread,
 * so the facade must make its store calls with the flag cleared, or a shutdown would leave keys held for a lease.
 */
class ConsumerInterruptedOnRedisTest {
    private DedupStore store;
    private IdempotentConsumer<String, String> consumer;

    @BeforeEach
    void open() {
        String url = TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", null);
        store = DedupStores.open(url + "?namespace=interrupt-" + UUID.randomUUID().toString().substring(0, 8));
        consumer = IdempotentConsumer.builder(store, (String key) -> key, ResultCodec.utf8())
                .lease(Duration.ofMinutes(5)).build();
    }

    @AfterEach
    void close() {
        Thread.interrupted();
        store.close();
    }

    @Test
    @DisplayName("a handler interrupted mid-way releases its claim: the redelivery runs at once, not after the lease")
    void interruptedHandlerReleases() {
        ProcessingOutcome<String> interrupted = consumer.process("order-1", key -> {
            throw new InterruptedException("consumer shutting down");
        });
        boolean flagKept = Thread.interrupted();

        ProcessingOutcome<String> redelivered = consumer.process("order-1", key -> "reserved " + key);

        assertThat(interrupted).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(flagKept).as("the caller still sees the interrupt").isTrue();
        assertThat(redelivered).isEqualTo(new ProcessingOutcome.Processed<>("order-1", "reserved order-1"));
    }

    @Test
    @DisplayName("a handler that finishes on an interrupted thread still records its completion")
    void completionOnAnInterruptedThread() {
        ProcessingOutcome<String> done = consumer.process("order-2", key -> {
            Thread.currentThread().interrupt();
            return "reserved " + key;
        });
        boolean flagKept = Thread.interrupted();

        ProcessingOutcome<String> redelivered = consumer.process("order-2", key -> "again " + key);

        assertThat(done).isEqualTo(new ProcessingOutcome.Processed<>("order-2", "reserved order-2"));
        assertThat(flagKept).isTrue();
        assertThat(redelivered).isEqualTo(new ProcessingOutcome.AlreadyProcessed<>("order-2",
                Optional.of("reserved order-2")));
    }
}
