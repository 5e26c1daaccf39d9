package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@link DedupStore#settleAll}: each settlement decided alone, by the rules of its single call, answered in input
 * order, its payload stored under its own key; bad batches rejected whole.
 */
abstract class SettleAllContract extends AsyncCancellationContract {

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private List<Claim> claimEach(int count, Duration lease) {
        List<Claim> claims = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            claims.add(claimed(store.claim(newKey(), lease)));
        }
        return claims;
    }

    @Test
    @DisplayName("settleAll completes, fails and releases claims as each settlement says")
    void settleAllEndsEachClaimAsAsked() {
        List<Claim> claims = claimEach(4, LONG);
        byte[] result = bytes("{\"reservation\":7}");
        byte[] error = bytes("{\"declined\":true}");

        List<Boolean> settled = store.settleAll(List.of(
                Settlement.complete(claims.get(0), LONG, result),
                Settlement.fail(claims.get(1), LONG, error),
                Settlement.release(claims.get(2)),
                Settlement.complete(claims.get(3), LONG, null)));

        assertThat(settled).containsExactly(true, true, true, true);
        Duplicate completed = duplicate(store.claim(claims.get(0).key(), LONG));
        assertThat(completed.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(completed.result()).hasValueSatisfying(b -> assertThat(b).isEqualTo(result));
        Duplicate failed = duplicate(store.claim(claims.get(1).key(), LONG));
        assertThat(failed.state()).isEqualTo(RecordState.FAILED);
        assertThat(failed.result()).hasValueSatisfying(b -> assertThat(b).isEqualTo(error));
        assertThat(store.claim(claims.get(2).key(), LONG)).as("the released key").isInstanceOf(Claim.class);
        Duplicate noResult = duplicate(store.claim(claims.get(3).key(), LONG));
        assertThat(noResult.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(noResult.result()).isEmpty();
    }

    @Test
    @DisplayName("settleAll answers in input order and stores each result under its own key")
    void settleAllKeepsInputOrderAndEachResult() throws InterruptedException {
        List<Claim> claims = new ArrayList<>();
        List<Boolean> held = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            boolean stale = i % 5 == 2; // lapsed ones in between: answers must line up, not just count
            claims.add(claimed(store.claim(newKey(), stale ? SHORT : LONG)));
            held.add(!stale);
        }
        sleepPast(claims.get(2).expiresAt().plus(SHORT));
        List<Settlement> settlements = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            settlements.add(Settlement.complete(claims.get(i), LONG, bytes("result-" + i)));
        }

        assertThat(store.settleAll(settlements)).containsExactlyElementsOf(held);

        for (int i = 0; i < claims.size(); i++) {
            if (held.get(i)) {
                String expected = "result-" + i;
                assertThat(duplicate(store.claim(claims.get(i).key(), LONG)).result()).as("key %d's result", i)
                        .hasValueSatisfying(b -> assertThat(new String(b, StandardCharsets.UTF_8))
                                .isEqualTo(expected));
            } else {
                assertThat(store.claim(claims.get(i).key(), LONG)).as("lapsed key %d", i).isInstanceOf(Claim.class);
            }
        }
    }

    @Test
    @DisplayName("settleAll answers false for a claim another owner took over and leaves that owner's record alone")
    void settleAllLeavesTheNewOwnersRecordAlone() throws InterruptedException {
        List<Claim> stale = claimEach(3, SHORT);
        Claim held = claimed(store.claim(newKey(), LONG));
        sleepPast(stale.get(2).expiresAt());
        List<Claim> current = new ArrayList<>();
        for (Claim each : stale) {
            current.add(claimed(store.claim(each.key(), LONG)));
        }

        List<Boolean> settled = store.settleAll(List.of(
                Settlement.complete(stale.get(0), LONG, bytes("stale")),
                Settlement.complete(held, LONG, bytes("held")),
                Settlement.fail(stale.get(1), LONG, bytes("stale")),
                Settlement.release(stale.get(2))));

        assertThat(settled).containsExactly(false, true, false, false);
        for (Claim each : current) {
            Duplicate duplicate = duplicate(store.claim(each.key(), LONG));
            assertThat(duplicate.state()).as("the new owner's record").isEqualTo(RecordState.IN_PROGRESS);
            assertThat(Duration.between(each.expiresAt(), duplicate.expiresAt()).abs())
                    .isLessThan(Duration.ofMillis(5));
            assertThat(store.complete(each, LONG, null)).as("the new owner still completes").isTrue();
        }
    }

    @Test
    @DisplayName("settleAll answers false for a lapsed claim nobody took over, and the key stays claimable")
    void settleAllRefusesLapsedClaims() throws InterruptedException {
        List<Claim> lapsed = claimEach(2, SHORT);
        sleepPast(lapsed.get(1).expiresAt());

        assertThat(store.settleAll(List.of(
                Settlement.complete(lapsed.get(0), LONG, bytes("late")),
                Settlement.release(lapsed.get(1))))).containsExactly(false, false);

        assertThat(store.claim(lapsed.get(0).key(), LONG)).isInstanceOf(Claim.class);
        assertThat(store.claim(lapsed.get(1).key(), LONG)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("a record settleAll ended cannot be settled again, and keeps its first result and fingerprint")
    void settledRecordsAreTerminal() {
        String key = newKey();
        byte[] fingerprint = bytes("sha-256 of the order");
        Claim claim = claimed(store.claim(key, LONG, fingerprint));
        assertThat(store.settleAll(List.of(Settlement.complete(claim, LONG, bytes("first"))))).containsExactly(true);

        assertThat(store.settleAll(List.of(Settlement.fail(claim, LONG, bytes("second"))))).containsExactly(false);
        assertThat(store.settleAll(List.of(Settlement.release(claim)))).containsExactly(false);

        Duplicate duplicate = duplicate(store.claim(key, LONG));
        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate.result()).hasValueSatisfying(b -> assertThat(b).isEqualTo(bytes("first")));
        assertThat(duplicate.fingerprint()).hasValueSatisfying(b -> assertThat(b).isEqualTo(fingerprint));
    }

    @Test
    @DisplayName("settleAll keeps each record for its own retention")
    void settleAllKeepsEachRetention() throws InterruptedException {
        List<Claim> claims = claimEach(2, LONG);

        assertThat(store.settleAll(List.of(
                Settlement.complete(claims.get(0), SHORT, null),
                Settlement.fail(claims.get(1), LONG, null)))).containsExactly(true, true);
        Duplicate shortLived = duplicate(store.claim(claims.get(0).key(), LONG));
        sleepPast(shortLived.expiresAt());

        assertThat(store.claim(claims.get(0).key(), LONG)).as("past its retention").isInstanceOf(Claim.class);
        assertThat(duplicate(store.claim(claims.get(1).key(), LONG)).state()).isEqualTo(RecordState.FAILED);
    }

    @Test
    @DisplayName("settleAll of nothing answers nothing")
    void settleAllOfNothing() {
        assertThat(store.settleAll(List.of())).isEmpty();
    }

    @Test
    @DisplayName("settleAll rejects a bad batch whole, naming the entry, and settles none of it")
    void settleAllRejectsBadBatches() {
        Claim claim = claimed(store.claim(newKey(), LONG));
        Settlement good = Settlement.complete(claim, LONG, bytes("kept out"));
        Claim foreign = claimed(open("tck-" + randomId()).claim(newKey(), LONG));

        assertThatThrownBy(() -> store.settleAll(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("settlements must not be null");
        assertThatThrownBy(() -> store.settleAll(Arrays.asList(good, null)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("settlements[1]:");
        assertThatThrownBy(() -> store.settleAll(List.of(good, Settlement.release(foreign))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("settlements[1]:")
                .hasMessageContaining(foreign.namespace());
        assertThatThrownBy(() -> store.settleAll(List.of(good, Settlement.release(claim))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("settlements[1]:")
                .hasMessageContaining("settled twice");
        assertThatThrownBy(() -> store.settleAll(List.of(good, Settlement.fail(
                claimed(store.claim(newKey(), LONG)), Duration.ZERO, null))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("settlements[1]:")
                .hasMessageContaining("retention");
        assertThatThrownBy(() -> store.settleAll(List.of(good, Settlement.complete(
                claimed(store.claim(newKey(), LONG)), LONG, new byte[DedupLimits.MAX_RESULT_BYTES + 1]))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("settlements[1]:")
                .hasMessageContaining(String.valueOf(DedupLimits.MAX_RESULT_BYTES));
        assertThatThrownBy(() -> store.settleAll(Collections.nCopies(DedupLimits.MAX_BATCH_KEYS + 1, good)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(DedupLimits.MAX_BATCH_KEYS));

        assertThat(duplicate(store.claim(claim.key(), LONG)).state()).as("the good settlement of each rejected batch")
                .isEqualTo(RecordState.IN_PROGRESS);
    }
}
