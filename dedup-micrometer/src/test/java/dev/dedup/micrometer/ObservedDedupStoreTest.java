package dev.dedup.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.memory.InMemoryDedupStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Each store call becomes an observation (a span under a tracing bridge), errors included. */
class ObservedDedupStoreTest {
    private final TestObservationRegistry observations = TestObservationRegistry.create();
    private final InMemoryDedupStore backend = new InMemoryDedupStore("observed");
    private final DedupStore store = MeteredDedupStore.wrap(backend, new SimpleMeterRegistry(), "orders-store",
            observations);

    @Test
    @DisplayName("a claim and its completion are two observations with the store, namespace and operation")
    void observesEachCall() {
        Claim claim = (Claim) store.claim("k", Duration.ofMinutes(1));
        store.complete(claim, Duration.ofMinutes(1), null);

        assertThat(observations).hasNumberOfObservationsWithNameEqualTo("dedup.store.call", 2)
                .hasObservationWithNameEqualTo("dedup.store.call").that()
                .hasLowCardinalityKeyValue("store", "orders-store")
                .hasLowCardinalityKeyValue("namespace", "observed")
                .hasBeenStarted().hasBeenStopped();
    }

    @Test
    @DisplayName("an async call is observed too, started at the call and stopped when its stage completes")
    void observesAsyncCalls() {
        store.async().claim("k", Duration.ofMinutes(1)).toCompletableFuture().join();

        assertThat(observations).hasNumberOfObservationsWithNameEqualTo("dedup.store.call", 1)
                .hasObservationWithNameEqualTo("dedup.store.call").that()
                .hasLowCardinalityKeyValue("operation", "claim")
                .hasBeenStarted().hasBeenStopped();
    }

    @Test
    @DisplayName("a failing call is observed with its error")
    void observesErrors() {
        backend.close();

        assertThatThrownBy(() -> store.claim("k", Duration.ofMinutes(1))).isInstanceOf(IllegalStateException.class);

        assertThat(observations).hasObservationWithNameEqualTo("dedup.store.call").that()
                .hasLowCardinalityKeyValue("operation", "claim")
                .assertThatError().isInstanceOf(IllegalStateException.class);
    }
}
