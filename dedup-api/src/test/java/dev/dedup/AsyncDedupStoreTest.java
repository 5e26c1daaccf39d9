package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.memory.InMemoryDedupStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The async views' own rules: where arguments are checked, where calls run, and what a failure looks like. */
class AsyncDedupStoreTest {
    private static final Duration LEASE = Duration.ofMinutes(1);

    private final AtomicInteger tasks = new AtomicInteger();
    private final Executor counting = task -> {
        tasks.incrementAndGet();
        task.run();
    };

    @Test
    @DisplayName("a store whose client blocks has no async(): the error names the executor adapter")
    void blockingStoreNamesTheAdapter() {
        HookedStore store = new HookedStore("blocking", Clock.systemUTC());

        assertThatThrownBy(store::async).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("AsyncDedupStore.onExecutor(store, executor)");
    }

    @Test
    @DisplayName("onExecutor runs every call on the given executor, and only there")
    void onExecutorRunsOnTheGivenExecutor() {
        AsyncDedupStore async = AsyncDedupStore.onExecutor(new InMemoryDedupStore("adapter"), counting);

        Claim claim = (Claim) async.claim("k", LEASE).toCompletableFuture().join();
        assertThat(async.complete(claim, LEASE, null).toCompletableFuture().join()).isTrue();
        assertThat(async.claimAll(List.of("a", "k"), LEASE).toCompletableFuture().join())
                .hasExactlyElementsOfTypes(Claim.class, Duplicate.class);

        assertThat(tasks).hasValue(3);
    }

    @Test
    @DisplayName("bad arguments throw at the call, on the caller's thread, and nothing reaches the executor")
    void badArgumentsThrowAtTheCall() {
        InMemoryDedupStore store = new InMemoryDedupStore("adapter");
        AsyncDedupStore async = AsyncDedupStore.onExecutor(store, counting);
        Claim foreign = (Claim) new InMemoryDedupStore("other").claim("k", LEASE);

        assertThatThrownBy(() -> async.claim("", LEASE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> async.claim("k", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> async.complete(foreign, LEASE, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("namespace 'other'");
        assertThatThrownBy(() -> async.claimAll(List.of("a", ""), LEASE))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.async().release(null)).isInstanceOf(IllegalArgumentException.class);
        store.close();
        assertThatThrownBy(() -> async.claim("k", LEASE)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> store.async().claim("k", LEASE)).isInstanceOf(IllegalStateException.class);

        assertThat(tasks).as("calls that reached the executor").hasValue(0);
    }

    @Test
    @DisplayName("a store failure fails the stage with the store's own exception")
    void storeFailureFailsTheStage() {
        DedupStoreException refused = DedupStoreException.retryable("hooked store", "claim", new IllegalStateException("down"));
        HookedStore store = new HookedStore("failing", Clock.systemUTC()).hook((operation, key) -> {
            throw refused;
        });
        CompletableFuture<ClaimResult> stage = AsyncDedupStore.onExecutor(store, counting).claim("k", LEASE)
                .toCompletableFuture();

        assertThatThrownBy(stage::join).isInstanceOf(CompletionException.class).cause().isSameAs(refused);
        assertThat(stage.handle((result, failure) -> failure).join()).as("the stage's own failure").isSameAs(refused);
    }

    @Test
    @DisplayName("the fingerprint is copied at the call: changing the array afterwards changes nothing stored")
    void fingerprintIsCopiedAtTheCall() {
        InMemoryDedupStore store = new InMemoryDedupStore("copy");
        byte[] fingerprint = {1, 2, 3};
        List<Runnable> queued = new ArrayList<>();
        CompletableFuture<ClaimResult> stage = AsyncDedupStore.onExecutor(store, queued::add)
                .claim("k", LEASE, fingerprint).toCompletableFuture();
        fingerprint[0] = 9;
        queued.forEach(Runnable::run);

        assertThat(stage.join()).isInstanceOf(Claim.class);
        assertThat(((Duplicate) store.claim("k", LEASE)).fingerprint())
                .hasValueSatisfying(stored -> assertThat(stored).containsExactly(1, 2, 3));
    }
}
