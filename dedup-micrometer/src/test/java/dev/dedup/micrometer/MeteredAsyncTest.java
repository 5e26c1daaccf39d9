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

/** The metered store and the async API: not metered natively yet, metered through the executor adapter. */
class MeteredAsyncTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MeteredDedupStore store = MeteredDedupStore.wrap(new InMemoryDedupStore("metered"), registry);

    @Test
    @DisplayName("async() says it is not metered and names the two ways that work")
    void asyncNamesTheWaysThatWork() {
        assertThatThrownBy(store::async).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("AsyncDedupStore.onExecutor").hasMessageContaining("delegate().async()");
        assertThat(store.delegate().async()).isNotNull();
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
