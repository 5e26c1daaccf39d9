package dev.dedup.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.memory.InMemoryDedupStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The metered store and the async API: its own view, metered, and the executor adapter over it. */
class MeteredAsyncTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MeteredDedupStore store = MeteredDedupStore.wrap(new InMemoryDedupStore("metered"), registry);

    @Test
    @DisplayName("async() is the delegate's view, metered; a stage that fails is timed with its error's outcome")
    void asyncIsMetered() {
        Claim claim = (Claim) store.async().claim("k", Duration.ofMinutes(1)).toCompletableFuture().join();
        store.delegate().close();

        assertThatThrownBy(() -> store.async().complete(claim, Duration.ofMinutes(1), null))
                .isInstanceOf(IllegalStateException.class);
        assertThat(registry.get("dedup.store.calls").tag("operation", "claim").tag("outcome", "ok").timer().count())
                .isEqualTo(1);
        assertThat(registry.get("dedup.claims").tag("result", "claimed").counter().count()).isEqualTo(1);
        assertThat(registry.get("dedup.store.calls").tag("operation", "complete").tag("outcome", "error_permanent")
                .timer().count()).isEqualTo(1);
    }

    @Test
    @DisplayName("through the executor adapter, async calls are the metered blocking calls")
    void adapterCallsAreMetered() {
        AsyncDedupStore async = AsyncDedupStore.onExecutor(store, Runnable::run);

        Claim claim = (Claim) async.claim("k", Duration.ofMinutes(1)).toCompletableFuture().join();
        async.complete(claim, Duration.ofMinutes(1), null).toCompletableFuture().join();

        assertThat(registry.get("dedup.store.calls").tag("operation", "claim").timer().count()).isEqualTo(1);
        assertThat(registry.get("dedup.store.calls").tag("operation", "complete").timer().count()).isEqualTo(1);
    }
}
