package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code settleAll} on a real Redis, for each topology and path: a mixed batch ends each key as asked with its own
 * result, and a claim that is no longer the caller's answers false and is left alone.
 */
abstract class RedisSettleAllContract {
    static final Duration LEASE = Duration.ofSeconds(30);
    static final Duration RETENTION = Duration.ofHours(1);

    /** The store whose settleAll is under test. */
    DedupStore store;
    /** A blocking store on the same namespace, to inspect what the batch left. */
    DedupStore witness;

    /** Opens a store on {@code namespace}: the one under test, through the path the subclass tests. */
    abstract DedupStore openStore(String namespace);

    /** Opens a plain blocking store on {@code namespace}. */
    abstract DedupStore openWitness(String namespace);

    @BeforeEach
    void open() {
        String namespace = "settle-" + UUID.randomUUID().toString().substring(0, 8);
        store = openStore(namespace);
        witness = openWitness(namespace);
    }

    @AfterEach
    void close() {
        store.close();
        witness.close();
    }

    static String newKey() {
        return "settle-" + UUID.randomUUID();
    }

    @Test
    @DisplayName("a mixed batch answers in input order, and each key ends as asked, with its own result")
    void mixedBatchEndsEachKeyAsAsked() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            keys.add(newKey());
        }
        byte[] fingerprint = "order-7".getBytes();
        List<Claim> claims = new ArrayList<>(List.of((Claim) store.claim(keys.get(0), LEASE, fingerprint)));
        store.claimAll(keys.subList(1, keys.size()), LEASE).forEach(result -> claims.add((Claim) result));
        List<Settlement> batch = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            batch.add(switch (i % 4) {
                case 0 -> Settlement.complete(claims.get(i), RETENTION, ("result-" + i).getBytes());
                case 1 -> Settlement.fail(claims.get(i), RETENTION, ("error-" + i).getBytes());
                case 2 -> Settlement.release(claims.get(i));
                default -> Settlement.complete(claims.get(i), RETENTION, i == 3 ? new byte[0] : null);
            });
        }

        List<Boolean> answers = store.settleAll(batch);

        assertThat(answers).hasSize(30).containsOnly(true);
        for (int i = 0; i < keys.size(); i++) {
            KeyRecord record = witness.inspect(keys.get(i)).orElse(null);
            switch (i % 4) {
                case 0 -> {
                    assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
                    assertThat(record.result()).isEqualTo(("result-" + i).getBytes());
                    assertThat(record.owner()).isEqualTo(claims.get(i).owner());
                    assertThat(record.expiresAt()).isAfter(claims.get(i).expiresAt());
                }
                case 1 -> {
                    assertThat(record.state()).isEqualTo(RecordState.FAILED);
                    assertThat(record.result()).isEqualTo(("error-" + i).getBytes());
                }
                case 2 -> assertThat(record).as("released key " + i).isNull();
                default -> {
                    assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
                    assertThat(record.result()).isEqualTo(i == 3 ? new byte[0] : null);
                }
            }
        }
        assertThat(witness.inspect(keys.get(0)).orElseThrow().fingerprint()).as("the claim's fingerprint is kept")
                .isEqualTo(fingerprint);
        assertThat(witness.claim(keys.get(2), LEASE)).as("a released key is claimable at once")
                .isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("a claim taken over after its lease lapsed answers false; the new owner's record is untouched")
    void lapsedClaimAnswersFalseAndLeavesTheNewOwnersRecord() throws InterruptedException {
        Claim lapsed = (Claim) store.claim(newKey(), Duration.ofMillis(200));
        Claim lapsedRelease = (Claim) store.claim(newKey(), Duration.ofMillis(200));
        Claim live = (Claim) store.claim(newKey(), LEASE);
        Thread.sleep(400);
        Claim newOwner = (Claim) witness.claim(lapsed.key(), LEASE);
        Claim newReleaseOwner = (Claim) witness.claim(lapsedRelease.key(), LEASE);

        List<Boolean> answers = store.settleAll(List.of(
                Settlement.complete(lapsed, RETENTION, "stale".getBytes()),
                Settlement.complete(live, RETENTION, "fresh".getBytes()),
                Settlement.release(lapsedRelease)));

        assertThat(answers).containsExactly(false, true, false);
        for (Claim holder : List.of(newOwner, newReleaseOwner)) {
            KeyRecord record = witness.inspect(holder.key()).orElseThrow();
            assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
            assertThat(record.owner()).isEqualTo(holder.owner());
            assertThat(record.result()).isNull();
            assertThat(record.expiresAt()).isEqualTo(holder.expiresAt());
        }
        assertThat(witness.inspect(live.key()).orElseThrow().result()).isEqualTo("fresh".getBytes());
    }

    @Test
    @DisplayName("a settled claim settled again answers false and leaves the record as the first settle made it")
    void settledTwiceAnswersFalse() {
        Claim claim = (Claim) store.claim(newKey(), LEASE);
        assertThat(store.settleAll(List.of(Settlement.complete(claim, RETENTION, "first".getBytes()))))
                .containsExactly(true);

        assertThat(store.settleAll(List.of(Settlement.fail(claim, RETENTION, "second".getBytes()))))
                .containsExactly(false);
        assertThat(witness.inspect(claim.key()).orElseThrow().result()).isEqualTo("first".getBytes());
    }
}
