package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.memory.InMemoryDedupStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link IdempotentConsumer#processDeferred}: a handler whose work finishes after it returns. */
class IdempotentConsumerDeferredTest {
    private final ManualClock clock = new ManualClock();
    private final DedupStore store = new InMemoryDedupStore("deferred-test", clock);
    private final AtomicInteger runs = new AtomicInteger();

    private IdempotentConsumer<String, String> consumer(DedupStore on, Duration lease) {
        return IdempotentConsumer.builder(on, (String id) -> id, ResultCodec.utf8())
                .lease(lease)
                .retention(Duration.ofHours(1))
                .keepKeyOn(e -> e instanceof IllegalStateException)
                .build();
    }

    private CompletionStage<String> later(CompletableFuture<String> work) {
        runs.incrementAndGet();
        return work;
    }

    private static <T> T now(CompletionStage<T> stage) {
        assertThat(stage.toCompletableFuture()).isDone();
        return stage.toCompletableFuture().join();
    }

    @Test
    @DisplayName("the key is held while the work is pending, and completed with its result when it finishes")
    void completesWhenTheWorkFinishes() {
        var consumer = consumer(store, Duration.ofSeconds(30));
        CompletableFuture<String> work = new CompletableFuture<>();

        CompletionStage<ProcessingOutcome<String>> first = consumer.processDeferred("k-1", id -> later(work));
        ProcessingOutcome<String> whilePending = now(consumer.processDeferred("k-1",
                id -> later(new CompletableFuture<>())));
        assertThat(first.toCompletableFuture()).isNotDone();
        work.complete("done");

        assertThat(whilePending).isInstanceOf(ProcessingOutcome.InProgressElsewhere.class);
        assertThat(now(first)).isEqualTo(new ProcessingOutcome.Processed<>("k-1", "done"));
        ProcessingOutcome<String> replay = now(consumer.processDeferred("k-1", id -> later(new CompletableFuture<>())));
        assertThat(((ProcessingOutcome.AlreadyProcessed<String>) replay).result()).contains("done");
        assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("work that fails releases the key, a failure to keep keeps it, as process does")
    void failedWorkReleasesOrKeeps() {
        var consumer = consumer(store, Duration.ofSeconds(30));

        ProcessingOutcome<String> released = now(consumer.processDeferred("k-2",
                id -> CompletableFuture.failedFuture(new IllegalArgumentException("transient"))));
        ProcessingOutcome<String> kept = now(consumer.processDeferred("k-3",
                id -> CompletableFuture.failedFuture(new IllegalStateException("final"))));

        assertThat(released).isEqualTo(new ProcessingOutcome.Failed<>("k-2",
                ((ProcessingOutcome.Failed<String>) released).cause(), false));
        assertThat(store.claim("k-2", Duration.ofSeconds(30))).isInstanceOf(Claim.class);
        assertThat(((ProcessingOutcome.Failed<String>) kept).keyKept()).isTrue();
        assertThat(now(consumer.processDeferred("k-3", id -> later(new CompletableFuture<>()))))
                .isInstanceOf(ProcessingOutcome.AlreadyFailed.class);
    }

    @Test
    @DisplayName("a handler that throws before returning its stage releases the key")
    void aThrowingHandlerReleases() {
        var consumer = consumer(store, Duration.ofSeconds(30));

        ProcessingOutcome<String> outcome = now(consumer.processDeferred("k-4", id -> {
            throw new java.io.IOException("no stage");
        }));

        assertThat(outcome).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(store.claim("k-4", Duration.ofSeconds(30))).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("cancelled work may still run: the key is neither released nor completed, and lapses with its lease")
    void cancelledWorkKeepsTheKeyUntilTheLeaseLapses() {
        var consumer = consumer(store, Duration.ofSeconds(30));
        CompletableFuture<String> work = new CompletableFuture<>();

        CompletionStage<ProcessingOutcome<String>> first = consumer.processDeferred("k-5", id -> later(work));
        work.cancel(false);

        ProcessingOutcome<String> outcome = now(first);
        assertThat(outcome).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) outcome).keyKept()).isFalse();
        assertThat(store.claim("k-5", Duration.ofSeconds(30))).isInstanceOf(Duplicate.class);
        clock.advance(Duration.ofSeconds(31));
        assertThat(store.claim("k-5", Duration.ofSeconds(30))).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("heartbeats keep a pending claim past its lease")
    void heartbeatsKeepAPendingClaim() throws Exception {
        DedupStore realClock = new InMemoryDedupStore("deferred-heartbeat");
        var consumer = consumer(realClock, Duration.ofMillis(300));
        CompletableFuture<String> work = new CompletableFuture<>();

        CompletionStage<ProcessingOutcome<String>> first = consumer.processDeferred("k-6", id -> later(work));
        Thread.sleep(1_000);
        ClaimResult meanwhile = realClock.claim("k-6", Duration.ofSeconds(30));
        work.complete("late");

        assertThat(meanwhile).isInstanceOf(Duplicate.class);
        assertThat(first.toCompletableFuture().get()).isEqualTo(new ProcessingOutcome.Processed<>("k-6", "late"));
    }

    @Test
    @DisplayName("an Error that ends the work releases the key and fails the outcome's stage")
    void anErrorReleasesAndFailsTheStage() {
        var consumer = consumer(store, Duration.ofSeconds(30));
        CompletableFuture<String> work = new CompletableFuture<>();

        CompletionStage<ProcessingOutcome<String>> first = consumer.processDeferred("k-7", id -> later(work));
        work.completeExceptionally(new AssertionError("boom"));

        assertThatThrownBy(() -> first.toCompletableFuture().get()).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(AssertionError.class);
        assertThat(store.claim("k-7", Duration.ofSeconds(30))).isInstanceOf(Claim.class);
    }
}
