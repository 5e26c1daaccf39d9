package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Every way a delivery can go wrong ends in an outcome, with no double effect and no key left held. */
class IdempotentConsumerFailurePathsTest {
    record Message(String id) {}

    private final ManualClock clock = new ManualClock();
    private final HookedStore store = new HookedStore("failure-paths", clock);
    private final AtomicInteger runs = new AtomicInteger();

    private IdempotentConsumer.Builder<Message, String> builder(ResultCodec<String> codec) {
        return IdempotentConsumer.builder(store, Message::id, codec).lease(Duration.ofSeconds(30));
    }

    private String handle(Message message) {
        runs.incrementAndGet();
        return "done-" + message.id();
    }

    private static ResultCodec<String> codec(boolean encodeFails, boolean decodeFails) {
        return new ResultCodec<>() {
            @Override
            public byte[] encode(String result) {
                if (encodeFails) {
                    throw new IllegalStateException("cannot encode");
                }
                return result.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public String decode(byte[] bytes) {
                if (decodeFails) {
                    throw new IllegalStateException("cannot decode");
                }
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
    }

    @Test
    @DisplayName("a codec that cannot encode still completes the key: the handler never runs twice")
    void encodeFailureCompletesWithoutResult() {
        var consumer = builder(codec(true, false)).build();

        var first = consumer.process(new Message("e-1"), this::handle);
        var again = consumer.process(new Message("e-1"), this::handle);

        assertThat(first).isEqualTo(new ProcessingOutcome.Processed<>("e-1", "done-e-1"));
        assertThat(again).isEqualTo(new ProcessingOutcome.AlreadyProcessed<>("e-1", Optional.empty()));
        assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("a stored result that cannot be decoded is still already processed, without the result")
    void decodeFailureIsAlreadyProcessedWithoutResult() {
        builder(codec(false, false)).build().process(new Message("d-1"), this::handle);

        var again = builder(codec(false, true)).build().process(new Message("d-1"), this::handle);

        assertThat(again).isEqualTo(new ProcessingOutcome.AlreadyProcessed<>("d-1", Optional.empty()));
        assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("a key function that throws is a failed outcome before any claim")
    void throwingKeyFunctionFails() {
        var consumer = IdempotentConsumer.builder(store, (Message m) -> m.id().trim(), ResultCodec.utf8()).build();

        var outcome = consumer.process(new Message(null), this::handle);

        assertThat(outcome).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) outcome).cause()).isInstanceOf(NullPointerException.class);
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("a closed store fails the delivery before the handler; closed mid-handler, the lease is lost")
    void closedStoreIsAnOutcome() {
        var consumer = builder(ResultCodec.utf8()).build();

        var midway = consumer.process(new Message("c-1"), m -> {
            store.close();
            return handle(m);
        });
        var after = consumer.process(new Message("c-2"), this::handle);

        assertThat(midway).isInstanceOf(ProcessingOutcome.LeaseLost.class);
        assertThat(((ProcessingOutcome.LeaseLost<String>) midway).storeFailure())
                .hasValueSatisfying(e -> assertThat(e).isInstanceOf(IllegalStateException.class));
        assertThat(after).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) after).cause()).isInstanceOf(IllegalStateException.class);
        assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("an interrupted handler still releases its claim: the redelivery runs at once")
    void interruptedHandlerReleases() {
        store.hook(HookedStore.refusingInterruptedThreads());
        var consumer = builder(ResultCodec.utf8()).build();

        var interrupted = consumer.process(new Message("i-1"), m -> {
            throw new InterruptedException("shutting down");
        });
        boolean flagRestored = Thread.interrupted();
        var redelivered = consumer.process(new Message("i-1"), this::handle);

        assertThat(flagRestored).as("the interrupt flag is restored for the caller").isTrue();
        assertThat(interrupted).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(redelivered).isEqualTo(new ProcessingOutcome.Processed<>("i-1", "done-i-1"));
    }

    @Test
    @DisplayName("a handler that sets the interrupt flag and returns still completes its claim")
    void interruptFlagDoesNotSkipCompletion() {
        store.hook(HookedStore.refusingInterruptedThreads());
        var consumer = builder(ResultCodec.utf8()).build();

        var outcome = consumer.process(new Message("i-2"), m -> {
            Thread.currentThread().interrupt();
            return handle(m);
        });

        assertThat(Thread.interrupted()).isTrue();
        assertThat(outcome).isEqualTo(new ProcessingOutcome.Processed<>("i-2", "done-i-2"));
    }

    @Test
    @DisplayName("a keep-key predicate that throws releases the key instead of keeping it")
    void throwingPredicateReleases() {
        var consumer = builder(ResultCodec.utf8()).keepKeyOn(e -> {
            throw new IllegalArgumentException("bad predicate");
        }).build();

        var failed = consumer.process(new Message("p-1"), m -> {
            throw new RuntimeException("boom");
        });
        var redelivered = consumer.process(new Message("p-1"), this::handle);

        assertThat(((ProcessingOutcome.Failed<String>) failed).keyKept()).isFalse();
        assertThat(redelivered).isInstanceOf(ProcessingOutcome.Processed.class);
    }

    @Test
    @DisplayName("a kept failure stores the chosen description, which every redelivery gets back")
    void keptFailureStoresTheDescription() {
        var consumer = builder(ResultCodec.utf8())
                .keepKeyOn(e -> e instanceof IllegalArgumentException)
                .failureDescription(e -> "{\"status\":402,\"error\":\"" + e.getMessage() + "\"}")
                .build();

        var failed = consumer.process(new Message("k-1"), m -> {
            throw new IllegalArgumentException("card declined");
        });
        var retried = consumer.process(new Message("k-1"), this::handle);

        assertThat(((ProcessingOutcome.Failed<String>) failed).keyKept()).isTrue();
        assertThat(retried).isEqualTo(new ProcessingOutcome.AlreadyFailed<>("k-1",
                Optional.of("{\"status\":402,\"error\":\"card declined\"}")));
        assertThat(runs).hasValue(0);
    }

    @Test
    @DisplayName("an outcome listener that throws is logged and never changes the outcome")
    void throwingOutcomeListenerChangesNothing() {
        var consumer = builder(ResultCodec.utf8()).onOutcome(outcome -> {
            throw new IllegalStateException("metrics down");
        }).build();

        var outcome = consumer.process(new Message("l-1"), this::handle);

        assertThat(outcome).isEqualTo(new ProcessingOutcome.Processed<>("l-1", "done-l-1"));
        assertThat(consumer.process(new Message("l-1"), this::handle))
                .isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
    }

    @Test
    @DisplayName("a heartbeat timer that refuses the task fails the delivery and frees the key")
    void rejectedHeartbeatFreesTheKey() {
        ScheduledThreadPoolExecutor shutDown = new ScheduledThreadPoolExecutor(1);
        shutDown.shutdown();
        var consumer = builder(ResultCodec.utf8()).heartbeatScheduler(shutDown).build();

        var outcome = consumer.process(new Message("h-1"), this::handle);

        assertThat(outcome).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) outcome).cause())
                .isInstanceOf(RejectedExecutionException.class);
        assertThat(runs).hasValue(0);
        assertThat(store.claim("h-1", Duration.ofSeconds(1))).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("an extend stuck in the store for one key never delays another key's extend")
    void stuckExtendDoesNotDelayOtherKeys() throws Exception {
        HookedStore realTime = new HookedStore("heartbeats", Clock.systemUTC());
        CountDownLatch unblock = new CountDownLatch(1);
        realTime.hook((operation, key) -> {
            if (operation.equals("extend") && key.equals("stuck")) {
                try {
                    unblock.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        var consumer = IdempotentConsumer.builder(realTime, Message::id, ResultCodec.utf8())
                .lease(Duration.ofMillis(300)).build();
        CountDownLatch bothRunning = new CountDownLatch(2);
        MessageHandler<Message, String> slowHandler = m -> {
            bothRunning.countDown();
            Thread.sleep(1_200);
            return "slow-" + m.id();
        };

        var stuck = CompletableFuture.supplyAsync(() -> consumer.process(new Message("stuck"), slowHandler));
        var healthy = CompletableFuture.supplyAsync(() -> consumer.process(new Message("healthy"), slowHandler));
        assertThat(bothRunning.await(5, TimeUnit.SECONDS)).isTrue();
        // Four leases later, the healthy key must still be held: its extends ran beside the stuck one.
        Thread.sleep(900);
        var redeliveredHealthy = consumer.process(new Message("healthy"), this::handle);
        unblock.countDown();

        assertThat(redeliveredHealthy).isInstanceOf(ProcessingOutcome.InProgressElsewhere.class);
        assertThat(healthy.get(5, TimeUnit.SECONDS))
                .isEqualTo(new ProcessingOutcome.Processed<>("healthy", "slow-healthy"));
        assertThat(stuck.get(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(runs).hasValue(0);
    }
}
