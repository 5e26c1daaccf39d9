package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.memory.InMemoryDedupStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link IdempotentConsumer#processInOrder}: one claimAll per batch, and a walk that stops where a retry must begin. */
class IdempotentConsumerInOrderTest {
    record Message(String id, String body) {}

    private final ManualClock clock = new ManualClock();
    private final CountingStore store = new CountingStore(new InMemoryDedupStore("in-order-test", clock));
    private final List<String> handled = new ArrayList<>();

    private IdempotentConsumer<Message, String> consumer() {
        return IdempotentConsumer.builder(store, Message::id, ResultCodec.utf8())
                .keepKeyOn(e -> e instanceof IllegalStateException)
                .build();
    }

    private String handle(Message message) {
        handled.add(message.id());
        switch (message.body()) {
            case "retry" -> throw new IllegalArgumentException("temporary");
            case "reject" -> throw new IllegalStateException("declined");
            default -> {
                return "done-" + message.id();
            }
        }
    }

    private static List<Message> messages(String... idsAndBodies) {
        List<Message> messages = new ArrayList<>();
        for (String spec : idsAndBodies) {
            String[] parts = spec.split(":", -1);
            messages.add(new Message(parts[0].isEmpty() ? null : parts[0], parts.length > 1 ? parts[1] : "ok"));
        }
        return messages;
    }

    @Test
    @DisplayName("one claimAll for the whole batch; each message runs in order and completes")
    void oneClaimAllPerBatch() {
        var outcomes = consumer().processInOrder(messages("a", "b", "c"), this::handle);

        assertThat(outcomes).containsExactly(new ProcessingOutcome.Processed<>("a", "done-a"),
                new ProcessingOutcome.Processed<>("b", "done-b"), new ProcessingOutcome.Processed<>("c", "done-c"));
        assertThat(handled).containsExactly("a", "b", "c");
        assertThat(store.calls).containsEntry("claimAll", 1).containsEntry("complete", 3).doesNotContainKey("claim");
    }

    @Test
    @DisplayName("a key held elsewhere stops the walk; the later messages' claims are released at once")
    void stopsAtInProgressElsewhere() {
        store.claim("b", Duration.ofSeconds(30));

        var outcomes = consumer().processInOrder(messages("a", "b", "c"), this::handle);

        assertThat(outcomes).hasSize(2);
        assertThat(outcomes.get(1)).isInstanceOf(ProcessingOutcome.InProgressElsewhere.class);
        assertThat(handled).containsExactly("a");
        assertThat(store.claim("c", Duration.ofSeconds(30)).isClaimed()).as("c was released").isTrue();
    }

    @Test
    @DisplayName("a retryable failure stops the walk; a kept failure does not")
    void retryableFailureStopsKeptFailureDoesNot() {
        var outcomes = consumer().processInOrder(messages("a:reject", "b", "c:retry", "d"), this::handle);

        assertThat(outcomes).hasSize(3);
        assertThat(outcomes.get(0)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.keyKept()).isTrue());
        assertThat(outcomes.get(2)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.keyKept()).isFalse());
        assertThat(handled).containsExactly("a", "b", "c");
        assertThat(store.claim("c", Duration.ofSeconds(30)).isClaimed()).as("c was released").isTrue();
        assertThat(store.claim("d", Duration.ofSeconds(30)).isClaimed()).as("d was released").isTrue();
    }

    @Test
    @DisplayName("a message without a key is Failed with a null key and does not stop the walk")
    void keylessMessageDoesNotStop() {
        var outcomes = consumer().processInOrder(messages("a", ":ok", "c"), this::handle);

        assertThat(outcomes).hasSize(3);
        assertThat(outcomes.get(1)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.key()).isNull());
        assertThat(handled).containsExactly("a", "c");
    }

    @Test
    @DisplayName("a key twice in one batch runs once; the repeat is claimed on its own and is AlreadyProcessed")
    void repeatedKeyInBatch() {
        var outcomes = consumer().processInOrder(messages("a", "b", "a"), this::handle);

        assertThat(outcomes.get(2)).isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
        assertThat(handled).containsExactly("a", "b");
        assertThat(store.calls).containsEntry("claimAll", 1).containsEntry("claim", 1);
    }

    @Test
    @DisplayName("a failed claimAll runs nothing: the first keyed message fails, and the walk stops there")
    void failedClaimAll() {
        store.failClaimAll = true;

        var outcomes = consumer().processInOrder(messages(":x", "a", "b"), this::handle);

        assertThat(outcomes).hasSize(2);
        assertThat(outcomes.get(1)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.cause()).isInstanceOf(DedupStoreException.class));
        assertThat(handled).isEmpty();
    }

    @Test
    @DisplayName("an Error from the handler releases its claim and every unused claim, then propagates")
    void errorReleasesEverything() {
        var consumer = consumer();
        assertThatThrownBy(() -> consumer.processInOrder(messages("a", "b", "c"), message -> {
            if (message.id().equals("b")) {
                throw new AssertionError("halt");
            }
            return "ok";
        })).isInstanceOf(AssertionError.class);

        assertThat(store.claim("b", Duration.ofSeconds(30)).isClaimed()).isTrue();
        assertThat(store.claim("c", Duration.ofSeconds(30)).isClaimed()).isTrue();
    }

    @Test
    @DisplayName("settling once: one claimAll and one settleAll for the batch, no complete per message")
    void settlingOnceIsTwoCalls() {
        var outcomes = consumer().processInOrderSettlingOnce(messages("a", "b", "c"), this::handle);

        assertThat(outcomes).containsExactly(new ProcessingOutcome.Processed<>("a", "done-a"),
                new ProcessingOutcome.Processed<>("b", "done-b"), new ProcessingOutcome.Processed<>("c", "done-c"));
        assertThat(store.calls).containsOnly(Map.entry("claimAll", 1), Map.entry("settleAll", 1));
        assertThat(store.claim("b", Duration.ofSeconds(30))).isInstanceOfSatisfying(Duplicate.class,
                duplicate -> assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED));
    }

    @Test
    @DisplayName("settling once: a kept failure is stored as failed at once and the walk goes on; a retryable one"
            + " stops it, and its claim and the unused ones are released in the batch's settle")
    void settlingOnceKeepsTheOutcomeRules() {
        var outcomes = consumer().processInOrderSettlingOnce(messages("a:reject", "b", "c:retry", "d"),
                this::handle);

        assertThat(outcomes).hasSize(3);
        assertThat(outcomes.get(0)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.keyKept()).isTrue());
        assertThat(outcomes.get(1)).isInstanceOf(ProcessingOutcome.Processed.class);
        assertThat(outcomes.get(2)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.keyKept()).isFalse());
        assertThat(handled).containsExactly("a", "b", "c");
        assertThat(store.calls).as("the kept failure's settle, then the batch's")
                .containsOnly(Map.entry("claimAll", 1), Map.entry("settleAll", 2));
        assertThat(store.claim("a", Duration.ofSeconds(30))).isInstanceOfSatisfying(Duplicate.class,
                duplicate -> assertThat(duplicate.state()).isEqualTo(RecordState.FAILED));
        assertThat(store.claim("c", Duration.ofSeconds(30)).isClaimed()).as("c was released").isTrue();
        assertThat(store.claim("d", Duration.ofSeconds(30)).isClaimed()).as("d was released").isTrue();
    }

    @Test
    @DisplayName("settling once: a kept failure the store did not keep (its key was forgotten mid-handler) stops the"
            + " walk there, as processInOrder does: nothing after it runs")
    void settlingOnceStopsAtAFailureTheStoreDidNotKeep() {
        var outcomes = consumer().processInOrderSettlingOnce(messages("a:reject", "b"), message -> {
            if (message.id().equals("a")) {
                store.forget("a");   // an operator freed the key while its handler ran: the fail is refused
            }
            return handle(message);
        });

        assertThat(outcomes).hasSize(1);
        assertThat(outcomes.get(0)).isInstanceOfSatisfying(ProcessingOutcome.Failed.class,
                failed -> assertThat(failed.keyKept()).isFalse());
        assertThat(handled).as("b never ran past a message that must come again").containsExactly("a");
        assertThat(store.claim("b", Duration.ofSeconds(30)).isClaimed()).as("b's claim was released").isTrue();
    }

    @Test
    @DisplayName("settling once: a key again after it ran has the settlements so far sent first, and is"
            + " AlreadyProcessed")
    void settlingOnceRepeatedKey() {
        var outcomes = consumer().processInOrderSettlingOnce(messages("a", "b", "a", "c"), this::handle);

        assertThat(outcomes.get(2)).isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
        assertThat(outcomes.get(3)).isInstanceOf(ProcessingOutcome.Processed.class);
        assertThat(handled).containsExactly("a", "b", "c");
        assertThat(store.calls).containsEntry("claimAll", 1).containsEntry("claim", 1).containsEntry("settleAll", 2);
    }

    @Test
    @DisplayName("settling once: a failed settle makes every message that ran LeaseLost with the failure; the keys"
            + " stay held until their lease lapses")
    void settlingOnceFailedSettle() {
        store.failSettleAll = true;

        var outcomes = consumer().processInOrderSettlingOnce(messages("a", "b"), this::handle);

        assertThat(outcomes).allSatisfy(outcome -> assertThat(outcome).isInstanceOfSatisfying(
                ProcessingOutcome.LeaseLost.class, lost -> assertThat(lost.storeFailure()).isPresent()));
        assertThat(store.claim("a", Duration.ofSeconds(30))).isInstanceOfSatisfying(Duplicate.class,
                duplicate -> assertThat(duplicate.state()).isEqualTo(RecordState.IN_PROGRESS));
    }

    @Test
    @DisplayName("settling once: an Error completes what ran before it, releases its claim and the unused ones,"
            + " then propagates")
    void settlingOnceError() {
        var consumer = consumer();
        assertThatThrownBy(() -> consumer.processInOrderSettlingOnce(messages("a", "b", "c"), message -> {
            if (message.id().equals("b")) {
                throw new AssertionError("halt");
            }
            return "ok";
        })).isInstanceOf(AssertionError.class);

        assertThat(store.claim("a", Duration.ofSeconds(30))).isInstanceOfSatisfying(Duplicate.class,
                duplicate -> assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED));
        assertThat(store.claim("b", Duration.ofSeconds(30)).isClaimed()).isTrue();
        assertThat(store.claim("c", Duration.ofSeconds(30)).isClaimed()).isTrue();
    }

    @Test
    @DisplayName("inTransaction: the same settings on a transaction's view, without heartbeats (a short lease is not"
            + " extended while the handler runs)")
    void inTransactionRunsNoHeartbeats() throws InterruptedException {
        var consumer = IdempotentConsumer.builder(store, Message::id, ResultCodec.utf8())
                .lease(Duration.ofMillis(30))
                .build();
        MessageHandler<Message, String> slow = message -> {
            Thread.sleep(150);
            return "done";
        };

        consumer.processInOrderSettlingOnce(messages("a"), slow);
        Thread.sleep(100);      // an extend in flight at the settle finishes on its own
        int extendsOutside = store.calls.getOrDefault("extend", 0);
        consumer.inTransaction(store).processInOrderSettlingOnce(messages("b"), slow);

        assertThat(extendsOutside).as("heartbeats of the plain consumer").isPositive();
        assertThat(store.calls.getOrDefault("extend", 0)).as("extends after the view's walk")
                .isEqualTo(extendsOutside);
        assertThat(store.claim("b", Duration.ofSeconds(30))).isInstanceOf(Duplicate.class);
    }

    /** Counts the calls that reach the store, by operation. */
    private static final class CountingStore implements DedupStore {
        final Map<String, Integer> calls = new ConcurrentHashMap<>();
        private final DedupStore delegate;
        volatile boolean failClaimAll;
        volatile boolean failSettleAll;

        CountingStore(DedupStore delegate) {
            this.delegate = delegate;
        }

        private void count(String operation) {
            calls.merge(operation, 1, Integer::sum);
        }

        @Override
        public String namespace() {
            return delegate.namespace();
        }

        @Override
        public ClaimResult claim(String key, Duration lease, byte[] fingerprint) {
            count("claim");
            return delegate.claim(key, lease, fingerprint);
        }

        @Override
        public List<ClaimResult> claimAll(List<String> keys, Duration lease) {
            count("claimAll");
            if (failClaimAll) {
                throw DedupStoreException.retryable("counting store", "claimAll", null);
            }
            return delegate.claimAll(keys, lease);
        }

        @Override
        public boolean complete(Claim claim, Duration retention, byte[] result) {
            count("complete");
            return delegate.complete(claim, retention, result);
        }

        @Override
        public boolean fail(Claim claim, Duration retention, byte[] error) {
            count("fail");
            return delegate.fail(claim, retention, error);
        }

        @Override
        public boolean release(Claim claim) {
            count("release");
            return delegate.release(claim);
        }

        @Override
        public List<Boolean> settleAll(List<Settlement> settlements) {
            count("settleAll");
            if (failSettleAll) {
                throw DedupStoreException.retryable("counting store", "settleAll", null);
            }
            return delegate.settleAll(settlements);
        }

        @Override
        public boolean extend(Claim claim, Duration lease) {
            count("extend");
            return delegate.extend(claim, lease);
        }

        @Override
        public Optional<KeyRecord> inspect(String key) {
            count("inspect");
            return delegate.inspect(key);
        }

        @Override
        public boolean forget(String key) {
            count("forget");
            return delegate.forget(key);
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
