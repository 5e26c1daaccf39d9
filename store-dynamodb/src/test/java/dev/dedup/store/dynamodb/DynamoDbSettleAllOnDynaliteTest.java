package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.tck.BlockingOverAsync;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * settleAll on the dynalite emulator, three ways: the blocking store without an async client (one write after
 * another), with one (the writes in flight together), and its native {@code async()} view. The answers, what each
 * key ends as, and how many writes were in flight at once. Expiry is crossed with a clock the test moves.
 */
class DynamoDbSettleAllOnDynaliteTest {
    private static final Duration LEASE = Duration.ofMinutes(1);
    private static final Duration RETENTION = Duration.ofDays(1);
    private static final int BATCH_CONCURRENCY = 8;

    private static DynamoDbClient client;
    private static DynamoDbAsyncClient asyncClient;
    private static final InFlight inFlight = new InFlight();

    private final MovableClock clock = new MovableClock();
    private String namespace;
    private DynamoDbDedupStore store;
    private DynamoDbDedupStore other;

    @BeforeAll
    static void createTheTable() {
        client = DynamoDbTestSupport.client(Duration.ofSeconds(10));
        asyncClient = DynamoDbTestSupport.asyncClient(ClientOverrideConfiguration.builder()
                .addExecutionInterceptor(inFlight).build());
        DynamoDbDedupTables.create(client, DynamoDbTestSupport.TABLE);
    }

    @AfterAll
    static void closeClients() {
        client.close();
        asyncClient.close();
    }

    @BeforeEach
    void openStores() {
        namespace = "settle-" + UUID.randomUUID().toString().substring(0, 8);
        store = builder().asyncClient(asyncClient).batchConcurrency(BATCH_CONCURRENCY).build();
        other = builder().build();
    }

    private DynamoDbDedupStore.Builder builder() {
        return DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace).clock(clock);
    }

    /** The store under test, by how it sends a batch's writes. */
    private DedupStore view(String path) {
        return switch (path) {
            case "in turn" -> other;
            case "concurrent" -> store;
            case "async view" -> BlockingOverAsync.of(store);
            default -> throw new IllegalArgumentException(path);
        };
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"in turn", "concurrent", "async view"})
    @DisplayName("a mixed batch answers in input order, and each key ends as asked with its own result")
    void mixedBatch(String path) {
        Claim first = claim("first", LEASE);
        Claim second = claim("second", LEASE);
        Claim failed = claim("failed", LEASE);
        Claim released = claim("released", LEASE);

        List<Boolean> answers = view(path).settleAll(List.of(
                Settlement.complete(first, RETENTION, bytes("result of first")),
                Settlement.fail(failed, RETENTION, bytes("error of failed")),
                Settlement.release(released),
                Settlement.complete(second, Duration.ofHours(2), bytes("result of second"))));

        assertThat(answers).containsExactly(true, true, true, true);
        assertRecord("first", RecordState.COMPLETED, first.owner(), "result of first", RETENTION);
        assertRecord("failed", RecordState.FAILED, failed.owner(), "error of failed", RETENTION);
        assertRecord("second", RecordState.COMPLETED, second.owner(), "result of second", Duration.ofHours(2));
        assertThat(other.inspect("released")).isEmpty();
        assertThat(other.claim("released", LEASE)).as("claimable at once").isInstanceOf(Claim.class);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"in turn", "concurrent", "async view"})
    @DisplayName("a claim taken over after its lease lapsed answers false; the new owner's record is untouched")
    void takenOverClaimAnswersFalse(String path) {
        Claim lapsed = claim("taken", LEASE);
        Claim kept = claim("kept", Duration.ofHours(1));
        clock.advance(LEASE.plusSeconds(1));
        Claim newOwner = (Claim) other.claim("taken", LEASE);
        KeyRecord before = other.inspect("taken").orElseThrow();

        List<Boolean> answers = view(path).settleAll(List.of(
                Settlement.complete(lapsed, RETENTION, bytes("stale result")),
                Settlement.complete(kept, RETENTION, bytes("kept result"))));

        assertThat(answers).containsExactly(false, true);
        KeyRecord after = other.inspect("taken").orElseThrow();
        assertThat(after).isEqualTo(before);
        assertThat(after.owner()).isEqualTo(newOwner.owner());
        assertThat(after.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(after.result()).isNull();
        assertRecord("kept", RecordState.COMPLETED, kept.owner(), "kept result", RETENTION);
        assertThat(other.release(newOwner)).as("still the new owner's claim").isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"in turn", "concurrent", "async view"})
    @DisplayName("a batch with stale settlements gives the exact answer of each, and writes nothing for the stale")
    void staleSettlementsAnswerExactly(String path) {
        Claim retakenLater = claim("retaken", LEASE);
        Claim lapsed = claim("lapsed", LEASE);
        Claim forgotten = claim("forgotten", LEASE);
        Claim releasable = claim("releasable", Duration.ofHours(1));
        Claim done = claim("done", Duration.ofHours(1));
        Claim valid = claim("valid", Duration.ofHours(1));
        Claim failing = claim("failing", Duration.ofHours(1));
        assertThat(store.complete(done, RETENTION, bytes("done before"))).isTrue();
        assertThat(other.forget("forgotten")).isTrue();
        clock.advance(LEASE.plusSeconds(1)); // "retaken", "lapsed" and "forgotten" had a one-minute lease
        Claim retaken = (Claim) other.claim("retaken", LEASE);

        List<Boolean> answers = view(path).settleAll(List.of(
                Settlement.complete(retakenLater, RETENTION, bytes("x")),
                Settlement.release(lapsed),
                Settlement.complete(valid, RETENTION, bytes("valid result")),
                Settlement.fail(forgotten, RETENTION, bytes("y")),
                Settlement.release(releasable),
                Settlement.complete(done, RETENTION, bytes("twice")),
                Settlement.fail(failing, RETENTION, bytes("failing error"))));

        assertThat(answers).containsExactly(false, false, true, false, true, false, true);
        assertThat(other.inspect("retaken").orElseThrow().owner()).isEqualTo(retaken.owner());
        assertThat(other.inspect("lapsed")).as("lapsed, not released: absent by expiry").isEmpty();
        assertRecord("valid", RecordState.COMPLETED, valid.owner(), "valid result", RETENTION);
        assertThat(other.inspect("forgotten")).isEmpty();
        assertThat(other.claim("releasable", LEASE)).isInstanceOf(Claim.class);
        assertThat(other.inspect("done").orElseThrow().result()).isEqualTo(bytes("done before"));
        assertRecord("failing", RecordState.FAILED, failing.owner(), "failing error", RETENTION);
    }

    @Test
    @DisplayName("with an async client the blocking store keeps up to batchConcurrency writes in flight, no more")
    void blockingStoreSendsTheWritesTogether() {
        // Warmed up first, so the async client's connections are open; timings printed, not asserted.
        System.out.println("dynalite settleAll of 40, in turn vs concurrent (ms): " + settleMillis(other, "w1-")
                + " vs " + settleMillis(store, "w2-") + "; then " + settleMillis(other, "t1-") + " vs "
                + settleMillis(store, "t2-"));
        List<Claim> claims = IntStream.range(0, 40).mapToObj(i -> claim("k-" + i, LEASE)).toList();
        inFlight.reset();

        List<Boolean> answers = store.settleAll(claims.stream()
                .map(claim -> Settlement.complete(claim, RETENTION, bytes(claim.key()))).toList());

        assertThat(answers).hasSize(40).containsOnly(true);
        assertThat(inFlight.sent()).isEqualTo(40);
        assertThat(inFlight.most()).isBetween(2, BATCH_CONCURRENCY);
        claims.forEach(claim -> assertThat(other.inspect(claim.key()).orElseThrow().result())
                .isEqualTo(bytes(claim.key())));
    }

    private long settleMillis(DedupStore settling, String prefix) {
        List<Settlement> batch = IntStream.range(0, 40)
                .mapToObj(i -> Settlement.complete(claim(prefix + i, LEASE), RETENTION, null)).toList();
        long started = System.nanoTime();
        assertThat(settling.settleAll(batch)).containsOnly(true);
        return (System.nanoTime() - started) / 1_000_000;
    }

    private Claim claim(String key, Duration lease) {
        return (Claim) other.claim(key, lease);
    }

    private void assertRecord(String key, RecordState state, String owner, String result, Duration retention) {
        KeyRecord record = other.inspect(key).orElseThrow();
        assertThat(record.state()).as(key).isEqualTo(state);
        assertThat(record.owner()).as(key).isEqualTo(owner);
        assertThat(record.result()).as(key).isEqualTo(bytes(result));
        assertThat(record.expiresAt()).as(key).isEqualTo(clock.instant().plus(retention));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Counts the async client's requests and the most that were on the wire at once. */
    private static final class InFlight implements ExecutionInterceptor {
        private final AtomicInteger now = new AtomicInteger();
        private final AtomicInteger most = new AtomicInteger();
        private final AtomicInteger sent = new AtomicInteger();

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            sent.incrementAndGet();
            most.accumulateAndGet(now.incrementAndGet(), Math::max);
        }

        @Override
        public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
            now.decrementAndGet();
        }

        void reset() {
            most.set(0);
            sent.set(0);
        }

        int most() {
            return most.get();
        }

        int sent() {
            return sent.get();
        }
    }

    /** A clock the test moves by hand, starting at the real time and never moving by itself. */
    private static final class MovableClock extends Clock {
        private final AtomicLong millis = new AtomicLong(System.currentTimeMillis());

        void advance(Duration duration) {
            millis.addAndGet(duration.toMillis());
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis.get());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("always UTC");
        }
    }
}
