package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.memory.InMemoryDedupStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Payload fingerprints in the facade: the same key with another payload is {@code KeyReused}, never a replay. */
class IdempotentConsumerFingerprintTest {
    record Order(String id, String body) {}

    private final ManualClock clock = new ManualClock();
    private final DedupStore store = new InMemoryDedupStore("fingerprints", clock);
    private final AtomicInteger runs = new AtomicInteger();
    private final List<ProcessingOutcome<?>> reported = new ArrayList<>();

    private static byte[] sha256(Order order) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(order.body().getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private IdempotentConsumer.Builder<Order, String> builder() {
        return IdempotentConsumer.builder(store, Order::id, ResultCodec.utf8())
                .lease(Duration.ofSeconds(30))
                .retention(Duration.ofHours(1))
                .keepKeyOn(e -> e instanceof IllegalStateException)
                .onOutcome(reported::add);
    }

    private IdempotentConsumer<Order, String> consumer() {
        return builder().fingerprint(IdempotentConsumerFingerprintTest::sha256).build();
    }

    private String charge(Order order) {
        runs.incrementAndGet();
        return "charged " + order.body();
    }

    @Test
    @DisplayName("a redelivery with the same payload replays; the same key with another payload is KeyReused")
    void sameKeyDifferentPayloadIsKeyReused() {
        var consumer = consumer();

        var first = consumer.process(new Order("o-1", "10 EUR"), this::charge);
        var redelivery = consumer.process(new Order("o-1", "10 EUR"), this::charge);
        var reused = consumer.process(new Order("o-1", "99 EUR"), this::charge);

        assertThat(first).isEqualTo(new ProcessingOutcome.Processed<>("o-1", "charged 10 EUR"));
        assertThat(redelivery).isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
        assertThat(((ProcessingOutcome.AlreadyProcessed<String>) redelivery).result()).contains("charged 10 EUR");
        assertThat(reused).isEqualTo(new ProcessingOutcome.KeyReused<>("o-1"));
        assertThat(reused.shouldAck()).isFalse();
        assertThat(runs).hasValue(1);
        assertThat(reported).containsExactly(first, redelivery, reused);
        // The reuse changed nothing: the original payload still replays.
        assertThat(consumer.process(new Order("o-1", "10 EUR"), this::charge))
                .isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
    }

    @Test
    @DisplayName("another payload is KeyReused while the first is still running, not InProgressElsewhere")
    void reusedWhileInProgress() {
        store.claim("o-2", Duration.ofSeconds(30), sha256(new Order("o-2", "first")));

        var same = consumer().process(new Order("o-2", "first"), this::charge);
        var other = consumer().process(new Order("o-2", "second"), this::charge);

        assertThat(same).isInstanceOf(ProcessingOutcome.InProgressElsewhere.class);
        assertThat(other).isEqualTo(new ProcessingOutcome.KeyReused<>("o-2"));
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("another payload is KeyReused after a kept failure, not AlreadyFailed")
    void reusedAfterAKeptFailure() {
        var consumer = consumer();
        var failed = consumer.process(new Order("o-3", "declined"), order -> {
            throw new IllegalStateException("card declined");
        });

        var redelivery = consumer.process(new Order("o-3", "declined"), this::charge);
        var other = consumer.process(new Order("o-3", "retry with another card"), this::charge);

        assertThat(failed).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) failed).keyKept()).isTrue();
        assertThat(redelivery).isInstanceOf(ProcessingOutcome.AlreadyFailed.class);
        assertThat(other).isEqualTo(new ProcessingOutcome.KeyReused<>("o-3"));
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("a record without a fingerprint, or a message without one, matches: a replay as before")
    void missingFingerprintOnEitherSideIsAReplay() {
        var plain = builder().build();
        plain.process(new Order("o-4", "stored without"), this::charge);
        var fingerprinting = builder().fingerprint(order -> order.body().equals("none") ? null : sha256(order))
                .build();
        fingerprinting.process(new Order("o-5", "stored with"), this::charge);

        var againstPlainRecord = fingerprinting.process(new Order("o-4", "another"), this::charge);
        var withoutOwnFingerprint = fingerprinting.process(new Order("o-5", "none"), this::charge);

        assertThat(againstPlainRecord).isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
        assertThat(withoutOwnFingerprint).isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
        assertThat(runs).hasValue(2);
    }

    @Test
    @DisplayName("after the record expires, another payload takes the key over with its own fingerprint")
    void takeOverAfterExpiryStoresTheNewFingerprint() {
        var consumer = consumer();
        consumer.process(new Order("o-6", "old"), this::charge);
        clock.advance(Duration.ofHours(2));

        var fresh = consumer.process(new Order("o-6", "new"), this::charge);
        var oldAgain = consumer.process(new Order("o-6", "old"), this::charge);

        assertThat(fresh).isEqualTo(new ProcessingOutcome.Processed<>("o-6", "charged new"));
        assertThat(oldAgain).isEqualTo(new ProcessingOutcome.KeyReused<>("o-6"));
    }

    @Test
    @DisplayName("a fingerprint function that throws or returns too many bytes fails the delivery before the store")
    void badFingerprintFailsWithoutTouchingTheStore() {
        var throwing = builder().fingerprint(order -> {
            throw new IllegalArgumentException("no body");
        }).build();
        var tooLong = builder().fingerprint(order -> new byte[DedupLimits.MAX_FINGERPRINT_BYTES + 1]).build();

        var thrown = throwing.process(new Order("o-7", "x"), this::charge);
        var rejected = tooLong.process(new Order("o-7", "x"), this::charge);

        assertThat(thrown).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(thrown.key()).isNull();
        assertThat(rejected).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) rejected).cause()).hasMessageContaining("fingerprint");
        assertThat(runs).hasValue(0);
        assertThat(store.claim("o-7", Duration.ofSeconds(1))).as("the key was never claimed").isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("processInOrder claims each message with its fingerprint: a reused key is KeyReused and the walk goes on")
    void inOrderUsesFingerprints() {
        var consumer = consumer();
        consumer.process(new Order("o-8", "first"), this::charge);

        var outcomes = consumer.processInOrder(List.of(new Order("o-8", "other"), new Order("o-9", "next"),
                new Order("o-9", "next again")), this::charge);

        assertThat(outcomes).containsExactly(new ProcessingOutcome.KeyReused<>("o-8"),
                new ProcessingOutcome.Processed<>("o-9", "charged next"), new ProcessingOutcome.KeyReused<>("o-9"));
        assertThat(runs).hasValue(2);
    }
}
