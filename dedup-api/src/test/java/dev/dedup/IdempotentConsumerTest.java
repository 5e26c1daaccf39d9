package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.spi.AbstractDedupStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class IdempotentConsumerTest {
    record Message(String id, int amount) {}

    private final ManualClock clock = new ManualClock();
    private final DedupStore store = new InMemoryDedupStore("consumer-test", clock);
    private final AtomicInteger runs = new AtomicInteger();

    private IdempotentConsumer<Message, String> consumer(DedupStore on) {
        return IdempotentConsumer.builder(on, Message::id, ResultCodec.utf8())
                .lease(Duration.ofSeconds(30))
                .retention(Duration.ofHours(1))
                .keepKeyOn(e -> e instanceof IllegalStateException)
                .build();
    }

    private String handle(Message message) {
        runs.incrementAndGet();
        return "reserved-" + message.amount();
    }

    @Test
    @DisplayName("the first delivery runs the handler; redeliveries replay its result without running it")
    void processesOnceAndReplays() {
        var consumer = consumer(store);
        Message message = new Message("m-1", 3);

        var first = consumer.process(message, this::handle);
        var second = consumer.process(message, this::handle);

        assertThat(first).isEqualTo(new ProcessingOutcome.Processed<>("m-1", "reserved-3"));
        assertThat(second).isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
        assertThat(((ProcessingOutcome.AlreadyProcessed<String>) second).result()).contains("reserved-3");
        assertThat(first.shouldAck()).isTrue();
        assertThat(second.shouldAck()).isTrue();
        assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("a delivery while another consumer holds the key is in progress elsewhere, not acked")
    void reportsInProgressElsewhere() {
        Claim held = (Claim) store.claim("m-2", Duration.ofSeconds(30));

        var outcome = consumer(store).process(new Message("m-2", 1), this::handle);

        assertThat(outcome).isEqualTo(new ProcessingOutcome.InProgressElsewhere<>("m-2", held.expiresAt()));
        assertThat(outcome.shouldAck()).isFalse();
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("a handler failure releases the key so the redelivery runs at once")
    void failureReleasesTheKey() {
        var consumer = consumer(store);
        RuntimeException boom = new RuntimeException("database down");

        var failed = consumer.process(new Message("m-3", 1), m -> {
            throw boom;
        });
        var retried = consumer.process(new Message("m-3", 1), this::handle);

        assertThat(failed).isEqualTo(new ProcessingOutcome.Failed<>("m-3", boom, false));
        assertThat(failed.shouldAck()).isFalse();
        assertThat(retried).isInstanceOf(ProcessingOutcome.Processed.class);
    }

    @Test
    @DisplayName("a non-retryable failure keeps the key as failed, so redeliveries replay the failure, not success")
    void nonRetryableFailureKeepsTheKey() {
        var consumer = consumer(store);

        var failed = consumer.process(new Message("m-4", 1), m -> {
            throw new IllegalStateException("sku does not exist");
        });
        var redelivered = consumer.process(new Message("m-4", 1), this::handle);

        assertThat(((ProcessingOutcome.Failed<String>) failed).keyKept()).isTrue();
        assertThat(redelivered).isEqualTo(new ProcessingOutcome.AlreadyFailed<>("m-4",
                Optional.of("java.lang.IllegalStateException: sku does not exist")));
        assertThat(redelivered.shouldAck()).isTrue();
        assertThat(((Duplicate) store.claim("m-4", Duration.ofSeconds(1))).state()).isEqualTo(RecordState.FAILED);
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("a lease that lapses while the handler runs, with another consumer taking over, is reported")
    void reportsALostLease() {
        var consumer = consumer(store);

        var outcome = consumer.process(new Message("m-5", 2), m -> {
            clock.advance(Duration.ofSeconds(31));
            assertThat(store.claim("m-5", Duration.ofSeconds(30))).isInstanceOf(Claim.class);
            return handle(m);
        });

        assertThat(outcome).isEqualTo(new ProcessingOutcome.LeaseLost<>("m-5", "reserved-2", java.util.Optional.empty()));
        assertThat(outcome.shouldAck()).isTrue();
    }

    @Test
    @DisplayName("a handler that runs longer than its lease keeps the key through heartbeats")
    void heartbeatsKeepALongHandlersClaim() throws Exception {
        DedupStore realTime = new InMemoryDedupStore("heartbeat-test");
        var consumer = IdempotentConsumer.builder(realTime, Message::id, ResultCodec.utf8())
                .lease(Duration.ofMillis(200))
                .build();
        CountDownLatch pastTheFirstLease = new CountDownLatch(1);

        var slow = CompletableFuture.supplyAsync(() -> consumer.process(new Message("m-6", 1), m -> {
            pastTheFirstLease.countDown();
            Thread.sleep(700);
            return "slow";
        }));
        assertThat(pastTheFirstLease.await(5, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(400);
        var meanwhile = consumer.process(new Message("m-6", 1), this::handle);

        assertThat(meanwhile).isInstanceOf(ProcessingOutcome.InProgressElsewhere.class);
        assertThat(slow.get(5, TimeUnit.SECONDS)).isEqualTo(new ProcessingOutcome.Processed<>("m-6", "slow"));
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("a store failure on claim is a failed outcome carrying the store exception")
    void storeFailureOnClaimFails() {
        var outcome = consumer(new FailingStore(true)).process(new Message("m-7", 1), this::handle);

        assertThat(outcome).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) outcome).cause()).isInstanceOf(DedupStoreException.class);
        assertThat(outcome.shouldAck()).isFalse();
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("a store failure on completion is reported as a lost lease with the store failure")
    void storeFailureOnCompleteIsReported() {
        var outcome = consumer(new FailingStore(false)).process(new Message("m-8", 1), this::handle);

        assertThat(outcome).isInstanceOf(ProcessingOutcome.LeaseLost.class);
        assertThat(((ProcessingOutcome.LeaseLost<String>) outcome).storeFailure()).isPresent();
        assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("a message without a key fails before the handler, with a clear error, and does not throw")
    void missingKeyIsAFailedOutcome() {
        var outcome = consumer(store).process(new Message(null, 1), this::handle);

        assertThat(outcome).isInstanceOf(ProcessingOutcome.Failed.class);
        var failed = (ProcessingOutcome.Failed<String>) outcome;
        assertThat(failed.key()).isNull();
        assertThat(failed.cause()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key must not be null");
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("settings are checked when set")
    void checksSettings() {
        var builder = IdempotentConsumer.builder(store, Message::id, ResultCodec.none());
        assertThatThrownBy(() -> builder.lease(Duration.ZERO)).hasMessageContaining("lease must be in");
        assertThatThrownBy(() -> builder.retention(Duration.ofDays(400))).hasMessageContaining("retention must be in");
    }

    /** Stands in for a backend that is down: fails claims, or only completions. Not a backend test. */
    private static final class FailingStore extends AbstractDedupStore {
        private final InMemoryDedupStore delegate = new InMemoryDedupStore("failing");
        private final boolean failClaims;

        FailingStore(boolean failClaims) {
            super("failing");
            this.failClaims = failClaims;
        }

        private static DedupStoreException down(String operation) {
            return DedupStoreException.retryable("test store", operation, new java.io.IOException("connection refused"));
        }

        @Override
        protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
            if (failClaims) {
                throw down("claim");
            }
            return delegate.claim(key, lease, fingerprint);
        }

        @Override
        protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
            throw down("complete");
        }

        @Override
        protected boolean doRelease(Claim claim) {
            throw down("release");
        }

        @Override
        protected boolean doExtend(Claim claim, Duration lease) {
            throw down("extend");
        }

        @Override
        protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
            throw down("claimAll");
        }

        @Override
        protected KeyRecord doInspect(String key) {
            throw down("inspect");
        }

        @Override
        protected boolean doForget(String key) {
            throw down("forget");
        }
    }
}
