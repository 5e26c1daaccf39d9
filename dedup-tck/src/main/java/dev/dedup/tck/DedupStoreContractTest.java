package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.spi.StoreUri;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The contract every {@link DedupStore} keeps. A store module proves itself by extending this class in its tests:
 *
 * <pre>{@code
 * class RedisDedupStoreContractTest extends DedupStoreContractTest {
 *     protected DedupStore openStore(String namespace) { return new RedisDedupStore(connection, namespace); }
 *     protected String storeUri(String namespace) { return REDIS_URL + "?namespace=" + namespace; }
 * }
 * }</pre>
 *
 * <p>Each test runs in a fresh random namespace, so the kit can run against a long-lived server without cleanup.
 * Expiry is tested by waiting out short leases on the store's own clock, so a run takes seconds, not minutes.
 * A store that needs an exemption from any test here has a bug or a documented limitation.
 */
public abstract class DedupStoreContractTest extends SettleAllContract {
    private static final byte[] RESULT = "{\"reservation\":42}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] ERROR = "{\"declined\":\"insufficient funds\"}".getBytes(StandardCharsets.UTF_8);

    // ----- claim -------------------------------------------------------------------------------------------------

    @Test
    @DisplayName("a fresh key is claimed, with an owner token and an expiry one lease away")
    void claimsAFreshKey() {
        String key = newKey();
        Instant before = Instant.now();

        Claim claim = claimed(store.claim(key, LONG));

        assertThat(claim.key()).isEqualTo(key);
        assertThat(claim.namespace()).isEqualTo(store.namespace());
        assertThat(claim.owner()).isNotBlank();
        assertThat(claim.expiresAt())
                .isAfter(before.plus(LONG).minus(clockTolerance()))
                .isBefore(Instant.now().plus(LONG).plus(clockTolerance()));
    }

    @Test
    @DisplayName("every claim gets its own owner token")
    void givesEveryClaimItsOwnOwnerToken() {
        Claim first = claimed(store.claim(newKey(), LONG));
        Claim second = claimed(store.claim(newKey(), LONG));

        assertThat(first.owner()).isNotEqualTo(second.owner());
    }

    @Test
    @DisplayName("a second claim of a live key is a duplicate in progress, with the holder's expiry")
    void reportsALiveClaimAsDuplicateInProgress() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));

        Duplicate duplicate = duplicate(store.claim(key, LONG));

        assertThat(duplicate.key()).isEqualTo(key);
        assertThat(duplicate.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(duplicate.result()).isEmpty();
        assertThat(Duration.between(claim.expiresAt(), duplicate.expiresAt()).abs()).isLessThan(Duration.ofMillis(5));
    }

    @Test
    @DisplayName("a duplicate claim does not extend the live record")
    void duplicateClaimDoesNotExtendTheRecord() throws InterruptedException {
        String key = newKey();
        Claim claim = claimed(store.claim(key, SHORT));
        duplicate(store.claim(key, LONG));

        sleepPast(claim.expiresAt());

        assertThat(store.claim(key, LONG)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("a key is claimable again as soon as its lease expires, even if the backend has not deleted it")
    void claimableAgainOnceTheLeaseExpires() throws InterruptedException {
        String key = newKey();
        Claim first = claimed(store.claim(key, SHORT));

        sleepPast(first.expiresAt());
        Claim second = claimed(store.claim(key, LONG));

        assertThat(second.owner()).isNotEqualTo(first.owner());
        assertThat(store.claim(key, LONG)).isInstanceOf(Duplicate.class);
    }

    // ----- complete ----------------------------------------------------------------------------------------------

    @Test
    @DisplayName("a completed key is a completed duplicate that returns the stored result")
    void completedDuplicateReturnsTheResult() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        Instant beforeComplete = Instant.now();

        assertThat(store.complete(claim, VERY_LONG, RESULT)).isTrue();
        Duplicate duplicate = duplicate(store.claim(key, LONG));

        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(RESULT));
        assertThat(duplicate.expiresAt()).isAfter(beforeComplete.plus(VERY_LONG).minus(clockTolerance()));
    }

    @Test
    @DisplayName("a key completed without a result reports no result")
    void completedWithoutResultReportsNone() {
        String key = newKey();
        assertThat(store.complete(claimed(store.claim(key, LONG)), LONG, null)).isTrue();

        Duplicate duplicate = duplicate(store.claim(key, LONG));

        assertThat(duplicate.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate.result()).isEmpty();
    }

    @Test
    @DisplayName("results are stored byte for byte, empty and maximum size included")
    void storesResultsByteForByte() {
        byte[] everyByte = new byte[256];
        for (int i = 0; i < everyByte.length; i++) {
            everyByte[i] = (byte) i;
        }
        byte[] largest = new byte[DedupLimits.MAX_RESULT_BYTES];
        Arrays.fill(largest, (byte) 0x7f);
        largest[0] = 0;
        largest[largest.length - 1] = (byte) 0xff;

        for (byte[] result : List.of(everyByte, new byte[0], largest)) {
            String key = newKey();
            assertThat(store.complete(claimed(store.claim(key, LONG)), LONG, result)).isTrue();
            assertThat(duplicate(store.claim(key, LONG)).result())
                    .hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(result));
        }
    }

    @Test
    @DisplayName("a completed key is claimable again once its retention expires")
    void claimableAgainOnceTheRetentionExpires() throws InterruptedException {
        String key = newKey();
        assertThat(store.complete(claimed(store.claim(key, LONG)), SHORT, RESULT)).isTrue();
        Duplicate completed = duplicate(store.claim(key, LONG));

        sleepPast(completed.expiresAt());

        assertThat(store.claim(key, LONG)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("completing twice fails the second time and keeps the first result")
    void completeTwiceKeepsTheFirstResult() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        assertThat(store.complete(claim, LONG, RESULT)).isTrue();

        assertThat(store.complete(claim, LONG, new byte[] {1})).isFalse();

        assertThat(duplicate(store.claim(key, LONG)).result())
                .hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(RESULT));
    }

    // ----- fail --------------------------------------------------------------------------------------------------

    @Test
    @DisplayName("a failed key is a failed duplicate that returns the stored error, kept for the retention")
    void failedDuplicateReturnsTheError() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        Instant beforeFail = Instant.now();

        assertThat(store.fail(claim, VERY_LONG, ERROR)).isTrue();
        Duplicate duplicate = duplicate(store.claim(key, LONG));

        assertThat(duplicate.state()).isEqualTo(RecordState.FAILED);
        assertThat(duplicate.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(ERROR));
        assertThat(duplicate.expiresAt()).isAfter(beforeFail.plus(VERY_LONG).minus(clockTolerance()));
    }

    @Test
    @DisplayName("a key failed without an error payload is failed, not completed, and reports no payload")
    void failedWithoutErrorIsStillFailed() {
        String key = newKey();
        assertThat(store.fail(claimed(store.claim(key, LONG)), LONG, null)).isTrue();

        Duplicate duplicate = duplicate(store.claim(key, LONG));

        assertThat(duplicate.state()).isEqualTo(RecordState.FAILED);
        assertThat(duplicate.result()).isEmpty();
    }

    @Test
    @DisplayName("a failed record is terminal: it cannot be completed, failed again, released or extended")
    void failedRecordIsTerminal() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        assertThat(store.fail(claim, LONG, ERROR)).isTrue();

        assertThat(store.complete(claim, LONG, RESULT)).isFalse();
        assertThat(store.fail(claim, LONG, new byte[] {1})).isFalse();
        assertThat(store.release(claim)).isFalse();
        assertThat(store.extend(claim, LONG)).isFalse();

        Duplicate duplicate = duplicate(store.claim(key, LONG));
        assertThat(duplicate.state()).isEqualTo(RecordState.FAILED);
        assertThat(duplicate.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(ERROR));
    }

    @Test
    @DisplayName("a completed record cannot be turned into a failed one")
    void completedRecordCannotFail() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        assertThat(store.complete(claim, LONG, RESULT)).isTrue();

        assertThat(store.fail(claim, LONG, ERROR)).isFalse();

        assertThat(duplicate(store.claim(key, LONG)).state()).isEqualTo(RecordState.COMPLETED);
    }

    @Test
    @DisplayName("a failed key is claimable again once its retention expires")
    void failedKeyClaimableAgainOnceTheRetentionExpires() throws InterruptedException {
        String key = newKey();
        assertThat(store.fail(claimed(store.claim(key, LONG)), SHORT, ERROR)).isTrue();
        Duplicate failed = duplicate(store.claim(key, LONG));
        assertThat(failed.state()).isEqualTo(RecordState.FAILED);

        sleepPast(failed.expiresAt());

        assertThat(store.claim(key, LONG)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("a stale owner cannot fail the record of the owner that took over")
    void staleOwnerCannotFail() throws InterruptedException {
        String key = newKey();
        Claim stale = claimed(store.claim(key, SHORT));
        sleepPast(stale.expiresAt());
        Claim current = claimed(store.claim(key, LONG));

        assertThat(store.fail(stale, LONG, ERROR)).isFalse();

        assertThat(duplicate(store.claim(key, LONG)).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(store.complete(current, LONG, RESULT)).isTrue();
    }

    @Test
    @DisplayName("claimAll reports a failed key as a failed duplicate with its error")
    void claimAllReportsFailedKeys() {
        String failedKey = newKey();
        String fresh = newKey();
        assertThat(store.fail(claimed(store.claim(failedKey, LONG)), LONG, ERROR)).isTrue();

        List<ClaimResult> results = store.claimAll(List.of(failedKey, fresh), LONG);

        Duplicate failed = duplicate(results.get(0));
        assertThat(failed.state()).isEqualTo(RecordState.FAILED);
        assertThat(failed.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(ERROR));
        assertThat(results.get(1)).isInstanceOf(Claim.class);
    }

    // ----- release and extend ------------------------------------------------------------------------------------

    @Test
    @DisplayName("release frees the key at once, and a second release finds nothing")
    void releaseFreesTheKeyAtOnce() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));

        assertThat(store.release(claim)).isTrue();
        assertThat(store.release(claim)).isFalse();
        assertThat(store.claim(key, LONG)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("a completed record cannot be released: redeliveries stay duplicates")
    void completedRecordCannotBeReleased() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        assertThat(store.complete(claim, LONG, RESULT)).isTrue();

        assertThat(store.release(claim)).isFalse();
        assertThat(store.extend(claim, LONG)).isFalse();

        assertThat(duplicate(store.claim(key, LONG)).state()).isEqualTo(RecordState.COMPLETED);
    }

    @Test
    @DisplayName("extend keeps a claim alive past its first lease")
    void extendKeepsTheClaimAlive() throws InterruptedException {
        String key = newKey();
        Claim claim = claimed(store.claim(key, SHORT));

        assertThat(store.extend(claim, LONG)).isTrue();
        sleepPast(claim.expiresAt());

        Duplicate duplicate = duplicate(store.claim(key, LONG));
        assertThat(duplicate.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(duplicate.expiresAt()).isAfter(claim.expiresAt());
        assertThat(store.complete(claim, LONG, RESULT)).isTrue();
    }

    @Test
    @DisplayName("extend moves the expiry to one lease from now, shorter than before as well as longer")
    void extendSetsTheExpiryOneLeaseFromNow() throws InterruptedException {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        Duration longer = LONG.multipliedBy(2);
        Instant before = Instant.now();

        assertThat(store.extend(claim, longer)).isTrue();
        assertThat(duplicate(store.claim(key, LONG)).expiresAt())
                .isAfter(before.plus(longer).minus(clockTolerance()))
                .isBefore(Instant.now().plus(longer).plus(clockTolerance()));

        assertThat(store.extend(claim, SHORT)).isTrue();
        Duplicate shortened = duplicate(store.claim(key, LONG));
        assertThat(shortened.expiresAt()).isBefore(Instant.now().plus(SHORT).plus(clockTolerance()));
        sleepPast(shortened.expiresAt());
        assertThat(store.claim(key, LONG)).isInstanceOf(Claim.class);
    }

    // ----- stale owners ------------------------------------------------------------------------------------------

    @Test
    @DisplayName("after a takeover the stale owner can neither complete, release nor extend")
    void staleOwnerCannotTouchTheNewOwnersRecord() throws InterruptedException {
        String key = newKey();
        Claim stale = claimed(store.claim(key, SHORT));
        sleepPast(stale.expiresAt());
        Claim current = claimed(store.claim(key, LONG));

        assertThat(store.complete(stale, LONG, RESULT)).isFalse();
        assertThat(store.release(stale)).isFalse();
        assertThat(store.extend(stale, VERY_LONG)).isFalse();

        Duplicate duplicate = duplicate(store.claim(key, LONG));
        assertThat(duplicate.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(Duration.between(current.expiresAt(), duplicate.expiresAt()).abs()).isLessThan(Duration.ofMillis(5));
        assertThat(store.complete(current, LONG, new byte[] {7})).isTrue();
        assertThat(duplicate(store.claim(key, LONG)).result()).hasValueSatisfying(b -> assertThat(b).containsExactly(7));
    }

    @Test
    @DisplayName("an owner whose lease lapsed cannot complete, release or extend, even before anyone takes over")
    void lapsedOwnerCannotActWithoutTakeover() throws InterruptedException {
        String key = newKey();
        Claim lapsed = claimed(store.claim(key, SHORT));
        sleepPast(lapsed.expiresAt());

        assertThat(store.extend(lapsed, LONG)).isFalse();
        assertThat(store.complete(lapsed, LONG, RESULT)).isFalse();
        assertThat(store.release(lapsed)).isFalse();
        assertThat(store.claim(key, LONG)).isInstanceOf(Claim.class);
    }

    // ----- payload fingerprints ----------------------------------------------------------------------------------

    private static byte[] fingerprint(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static void hasFingerprint(Duplicate duplicate, byte[] expected) {
        assertThat(duplicate.fingerprint()).as("the duplicate's fingerprint")
                .hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(expected));
    }

    @Test
    @DisplayName("a claim's fingerprint comes back to duplicates in progress, unchanged by theirs or by extend")
    void fingerprintReturnedWhileInProgress() {
        String key = newKey();
        byte[] mine = fingerprint("sha256:order-7");
        Claim claim = claimed(store.claim(key, LONG, mine));

        Duplicate plain = duplicate(store.claim(key, LONG));
        Duplicate other = duplicate(store.claim(key, LONG, fingerprint("sha256:order-8")));
        assertThat(store.extend(claim, LONG)).isTrue();
        Duplicate extended = duplicate(store.claim(key, LONG));

        assertThat(other.state()).isEqualTo(RecordState.IN_PROGRESS);
        hasFingerprint(plain, mine);
        hasFingerprint(other, mine);
        hasFingerprint(extended, mine);
    }

    @Test
    @DisplayName("complete and fail keep the claim's fingerprint: completed and failed duplicates return it")
    void fingerprintKeptByCompleteAndFail() {
        String completedKey = newKey();
        String failedKey = newKey();
        byte[] completedPrint = fingerprint("completed-payload");
        byte[] failedPrint = fingerprint("failed-payload");
        assertThat(store.complete(claimed(store.claim(completedKey, LONG, completedPrint)), LONG, RESULT)).isTrue();
        assertThat(store.fail(claimed(store.claim(failedKey, LONG, failedPrint)), LONG, ERROR)).isTrue();

        Duplicate completed = duplicate(store.claim(completedKey, LONG, fingerprint("another")));
        Duplicate failed = duplicate(store.claim(failedKey, LONG));

        assertThat(completed.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(completed.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(RESULT));
        hasFingerprint(completed, completedPrint);
        assertThat(failed.state()).isEqualTo(RecordState.FAILED);
        assertThat(failed.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(ERROR));
        hasFingerprint(failed, failedPrint);
    }

    @Test
    @DisplayName("a claim without a fingerprint reports none, in progress, completed and failed")
    void noFingerprintReportsNone() {
        String inProgress = newKey();
        String completed = newKey();
        String failed = newKey();
        claimed(store.claim(inProgress, LONG));
        assertThat(store.complete(claimed(store.claim(completed, LONG, null)), LONG, null)).isTrue();
        assertThat(store.fail(claimed(store.claim(failed, LONG)), LONG, null)).isTrue();

        assertThat(duplicate(store.claim(inProgress, LONG, fingerprint("x"))).fingerprint()).isEmpty();
        assertThat(duplicate(store.claim(completed, LONG, fingerprint("x"))).fingerprint()).isEmpty();
        assertThat(duplicate(store.claim(failed, LONG, fingerprint("x"))).fingerprint()).isEmpty();
    }

    @Test
    @DisplayName("a take-over of an expired record replaces its fingerprint, with the new one or with none")
    void takeOverReplacesTheFingerprint() throws InterruptedException {
        String replaced = newKey();
        String cleared = newKey();
        Claim first = claimed(store.claim(replaced, SHORT, fingerprint("first")));
        Claim done = claimed(store.claim(cleared, LONG, fingerprint("first")));
        assertThat(store.complete(done, SHORT, null)).isTrue();
        Instant completedExpiry = duplicate(store.claim(cleared, LONG)).expiresAt();
        sleepPast(first.expiresAt());
        sleepPast(completedExpiry);

        claimed(store.claim(replaced, LONG, fingerprint("second")));
        claimed(store.claim(cleared, LONG));

        hasFingerprint(duplicate(store.claim(replaced, LONG)), fingerprint("second"));
        assertThat(duplicate(store.claim(cleared, LONG, fingerprint("third"))).fingerprint()).isEmpty();
    }

    @Test
    @DisplayName("fingerprints are stored byte for byte, every byte value, 1 byte and the maximum included")
    void fingerprintsAreStoredByteForByte() {
        byte[] longest = new byte[DedupLimits.MAX_FINGERPRINT_BYTES];
        for (int i = 0; i < longest.length; i++) {
            longest[i] = (byte) (i * 4 + 3);      // 3, 7, ... 255: low and high bytes
        }
        longest[0] = 0;
        longest[longest.length - 1] = (byte) 0xff;
        byte[] binary = {0, 1, 2, '\'', '"', '\\', (byte) 0x80, (byte) 0xc3, (byte) 0xff, 0};
        for (byte[] print : List.of(new byte[] {0}, new byte[] {(byte) 0xff}, binary, longest)) {
            String key = newKey();
            Claim claim = claimed(store.claim(key, LONG, print));
            hasFingerprint(duplicate(store.claim(key, LONG)), print);
            assertThat(store.complete(claim, LONG, print)).isTrue();
            Duplicate completed = duplicate(store.claim(key, LONG));
            hasFingerprint(completed, print);
            assertThat(completed.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(print));
        }
    }

    @Test
    @DisplayName("claimAll stores no fingerprint, but its duplicates return their record's")
    void claimAllReturnsStoredFingerprints() throws InterruptedException {
        String fingerprinted = newKey();
        String batchClaimed = newKey();
        String expired = newKey();
        byte[] print = fingerprint("batch-duplicate");
        claimed(store.claim(fingerprinted, LONG, print));
        sleepPast(claimed(store.claim(expired, SHORT, print)).expiresAt());

        List<ClaimResult> results = store.claimAll(List.of(fingerprinted, batchClaimed, expired), LONG);

        hasFingerprint(duplicate(results.get(0)), print);
        claimed(results.get(1));
        claimed(results.get(2));
        assertThat(duplicate(store.claim(batchClaimed, LONG, print)).fingerprint()).isEmpty();
        assertThat(duplicate(store.claim(expired, LONG, print)).fingerprint())
                .as("a batch take-over clears the old fingerprint").isEmpty();
    }

    // ----- claimAll ----------------------------------------------------------------------------------------------

    @Test
    @DisplayName("claimAll returns one claim per fresh key, in input order")
    void claimAllKeepsInputOrder() {
        List<String> keys = List.of(newKey(), newKey(), newKey(), newKey(), newKey());

        List<ClaimResult> results = store.claimAll(keys, LONG);

        assertThat(results).hasSize(keys.size()).allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
        assertThat(results.stream().map(ClaimResult::key).toList()).isEqualTo(keys);
        assertThat(results.stream().map(result -> ((Claim) result).owner()).distinct()).hasSize(keys.size());
        for (ClaimResult result : results) {
            assertThat(store.complete((Claim) result, LONG, RESULT)).isTrue();
        }
    }

    @Test
    @DisplayName("claimAll reports a key repeated in one batch as one claim, then duplicates")
    void claimAllReportsRepeatsInTheBatch() {
        String a = newKey();
        String b = newKey();

        List<ClaimResult> results = store.claimAll(List.of(a, b, a, a), LONG);

        assertThat(results.get(0)).isInstanceOf(Claim.class);
        assertThat(results.get(1)).isInstanceOf(Claim.class);
        assertThat(duplicate(results.get(2)).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(duplicate(results.get(3)).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(results.get(2).key()).isEqualTo(a);
    }

    @Test
    @DisplayName("claimAll mixes new keys, live claims, completed keys and expired records")
    void claimAllMixesNewAndExistingKeys() throws InterruptedException {
        String fresh = newKey();
        String live = newKey();
        String completed = newKey();
        String expired = newKey();
        claimed(store.claim(live, LONG));
        assertThat(store.complete(claimed(store.claim(completed, LONG)), LONG, RESULT)).isTrue();
        sleepPast(claimed(store.claim(expired, SHORT)).expiresAt());

        List<ClaimResult> results = store.claimAll(List.of(fresh, live, completed, expired), LONG);

        assertThat(results.get(0)).isInstanceOf(Claim.class);
        assertThat(duplicate(results.get(1)).state()).isEqualTo(RecordState.IN_PROGRESS);
        Duplicate done = duplicate(results.get(2));
        assertThat(done.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(done.result()).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(RESULT));
        assertThat(results.get(3)).isInstanceOf(Claim.class);
        assertThat(store.claim(fresh, LONG)).isInstanceOf(Duplicate.class);
    }

    @Test
    @DisplayName("claimAll of no keys returns no results")
    void claimAllOfNothing() {
        assertThat(store.claimAll(List.of(), LONG)).isEmpty();
    }

    // ----- namespaces and keys -----------------------------------------------------------------------------------

    // ----- inspect and forget: the operator's read and delete ------------------------------------------------

    private KeyRecord inspected(String key) {
        Optional<KeyRecord> found = store.inspect(key);
        assertThat(found).as("inspect of a key with a live record").isPresent();
        return found.get();
    }

    /** A store may keep no owner token (null); one that keeps it must report the claim's own. */
    private static void ownedBy(KeyRecord record, Claim claim) {
        if (record.owner() != null) {
            assertThat(record.owner()).as("the record's owner token").isEqualTo(claim.owner());
        }
    }

    @Test
    @DisplayName("inspect of a key never claimed, or released, is empty")
    void inspectOfAnAbsentKeyIsEmpty() {
        assertThat(store.inspect(newKey())).isEmpty();

        String released = newKey();
        assertThat(store.release(claimed(store.claim(released, LONG)))).isTrue();
        assertThat(store.inspect(released)).isEmpty();
    }

    @Test
    @DisplayName("inspect shows a claim in progress (owner, the lease's expiry, fingerprint, no result) and changes"
            + " nothing")
    void inspectShowsAClaimInProgress() {
        String key = newKey();
        byte[] print = fingerprint("inspected in progress");
        Claim claim = claimed(store.claim(key, LONG, print));

        KeyRecord record = inspected(key);

        assertThat(record.key()).isEqualTo(key);
        assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(Duration.between(claim.expiresAt(), record.expiresAt()).abs()).isLessThan(Duration.ofMillis(5));
        ownedBy(record, claim);
        assertThat(record.fingerprint()).isEqualTo(print);
        assertThat(record.result()).isNull();
        // Read-only: the record is as it was, and still the owner's.
        Duplicate after = duplicate(store.claim(key, LONG));
        assertThat(Duration.between(claim.expiresAt(), after.expiresAt()).abs()).isLessThan(Duration.ofMillis(5));
        assertThat(inspected(key).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(store.complete(claim, LONG, RESULT)).isTrue();
    }

    @Test
    @DisplayName("inspect shows a completed record with its result, its fingerprint and the retention's expiry")
    void inspectShowsACompletedRecord() {
        String key = newKey();
        byte[] print = fingerprint("inspected completed");
        Claim claim = claimed(store.claim(key, LONG, print));
        Instant before = Instant.now();
        assertThat(store.complete(claim, VERY_LONG, RESULT)).isTrue();
        Instant after = Instant.now();

        KeyRecord record = inspected(key);

        assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
        assertThat(record.result()).isEqualTo(RESULT);
        assertThat(record.fingerprint()).isEqualTo(print);
        assertThat(record.expiresAt())
                .isAfter(before.plus(VERY_LONG).minus(clockTolerance()))
                .isBefore(after.plus(VERY_LONG).plus(clockTolerance()));
        ownedBy(record, claim);
    }

    @Test
    @DisplayName("inspect shows a failed record with its error and the retention's expiry")
    void inspectShowsAFailedRecord() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        Instant before = Instant.now();
        assertThat(store.fail(claim, LONG, ERROR)).isTrue();
        Instant after = Instant.now();

        KeyRecord record = inspected(key);

        assertThat(record.state()).isEqualTo(RecordState.FAILED);
        assertThat(record.result()).isEqualTo(ERROR);
        assertThat(record.fingerprint()).isNull();
        assertThat(record.expiresAt())
                .isAfter(before.plus(LONG).minus(clockTolerance()))
                .isBefore(after.plus(LONG).plus(clockTolerance()));
        ownedBy(record, claim);
    }

    @Test
    @DisplayName("an expired lease or retention is absent to inspect and to forget, even before the backend deletes"
            + " it")
    void expiredRecordsAreAbsentToInspectAndForget() throws InterruptedException {
        String lapsed = newKey();
        String retained = newKey();
        Claim lease = claimed(store.claim(lapsed, SHORT));
        assertThat(store.complete(claimed(store.claim(retained, LONG)), SHORT, RESULT)).isTrue();
        Instant retainedUntil = inspected(retained).expiresAt();

        sleepPast(retainedUntil.isAfter(lease.expiresAt()) ? retainedUntil : lease.expiresAt());

        assertThat(store.inspect(lapsed)).as("an expired lease").isEmpty();
        assertThat(store.inspect(retained)).as("an expired retention").isEmpty();
        assertThat(store.forget(lapsed)).as("forget of an expired lease").isFalse();
        assertThat(store.forget(retained)).as("forget of an expired retention").isFalse();
        assertThat(store.claim(lapsed, LONG)).isInstanceOf(Claim.class);
        assertThat(store.claim(retained, LONG)).isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("forget removes a claim in progress: the next claim wins, the old owner can no longer act")
    void forgetFreesAKeyInProgress() {
        String key = newKey();
        Claim old = claimed(store.claim(key, LONG));

        assertThat(store.forget(key)).isTrue();

        assertThat(store.inspect(key)).isEmpty();
        assertThat(store.complete(old, LONG, RESULT)).as("the old owner's complete after forget").isFalse();
        assertThat(store.inspect(key)).as("nothing written by the refused complete").isEmpty();
        Claim next = claimed(store.claim(key, LONG));
        assertThat(store.complete(old, LONG, RESULT)).as("the old owner's complete").isFalse();
        assertThat(store.fail(old, LONG, ERROR)).as("the old owner's fail").isFalse();
        assertThat(store.extend(old, VERY_LONG)).as("the old owner's extend").isFalse();
        assertThat(store.release(old)).as("the old owner's release").isFalse();
        KeyRecord record = inspected(key);
        assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
        ownedBy(record, next);
        assertThat(store.complete(next, LONG, RESULT)).isTrue();
    }

    @Test
    @DisplayName("forget removes completed and failed records: the next claim wins, and nothing is replayed")
    void forgetFreesCompletedAndFailedKeys() {
        String completed = newKey();
        String failed = newKey();
        assertThat(store.complete(claimed(store.claim(completed, LONG)), VERY_LONG, RESULT)).isTrue();
        assertThat(store.fail(claimed(store.claim(failed, LONG)), VERY_LONG, ERROR)).isTrue();

        assertThat(store.forget(completed)).as("forget of a completed record").isTrue();
        assertThat(store.forget(failed)).as("forget of a failed record").isTrue();

        assertThat(store.inspect(completed)).isEmpty();
        assertThat(store.inspect(failed)).isEmpty();
        Claim again = claimed(store.claim(completed, LONG));
        claimed(store.claim(failed, LONG));
        KeyRecord record = inspected(completed);
        assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(record.result()).as("the forgotten result").isNull();
        ownedBy(record, again);
    }

    @Test
    @DisplayName("forget of a key never claimed, released or already forgotten is false")
    void forgetOfNothingIsFalse() {
        assertThat(store.forget(newKey())).as("forget of a key never claimed").isFalse();

        String released = newKey();
        assertThat(store.release(claimed(store.claim(released, LONG)))).isTrue();
        assertThat(store.forget(released)).as("forget of a released key").isFalse();

        String key = newKey();
        claimed(store.claim(key, LONG));
        assertThat(store.forget(key)).isTrue();
        assertThat(store.forget(key)).as("a second forget").isFalse();
    }

    @Test
    @DisplayName("inspect and forget see only their own namespace")
    void inspectAndForgetKeepToTheirNamespace() {
        DedupStore other = open(namespace + "-other");
        String key = newKey();
        claimed(store.claim(key, LONG));

        assertThat(other.inspect(key)).as("inspect in another namespace").isEmpty();
        assertThat(other.forget(key)).as("forget in another namespace").isFalse();
        Claim there = claimed(other.claim(key, LONG));
        assertThat(store.forget(key)).isTrue();

        assertThat(other.inspect(key)).as("the other namespace's record after forget here").isPresent();
        assertThat(other.complete(there, LONG, null)).isTrue();
    }

    @Test
    @DisplayName("the same key in two namespaces is two keys")
    void namespacesIsolateKeys() {
        DedupStore other = open(namespace + "-other");
        String key = newKey();

        Claim here = claimed(store.claim(key, LONG));
        Claim there = claimed(other.claim(key, LONG));
        assertThat(store.complete(here, LONG, RESULT)).isTrue();

        assertThat(duplicate(store.claim(key, LONG)).state()).isEqualTo(RecordState.COMPLETED);
        assertThat(duplicate(other.claim(key, LONG)).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThatThrownBy(() -> store.release(there))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(namespace + "-other");
        assertThat(other.release(there)).isTrue();
        assertThat(duplicate(store.claim(key, LONG)).state()).isEqualTo(RecordState.COMPLETED);
    }

    static Stream<String> opaqueKeys() {
        return Stream.of(
                "ключ-🔑-鍵-κλειδί",
                "{user-42}",
                "{",
                "}{",
                "orders:eu:42",
                "a/b\\c|d?e&f=g#h%20",
                " leading and trailing spaces ",
                "line\nbreak\ttab",
                "'; DROP TABLE dedup; --",
                "*?[]",
                "e\u0301",
                "\u00e9",
                "Key",
                "key",
                "🔑".repeat(DedupLimits.MAX_KEY_BYTES / 4));
    }

    @ParameterizedTest
    @MethodSource("opaqueKeys")
    @DisplayName("keys are opaque: any Unicode, separators, braces and the maximum length")
    void keysAreOpaque(String suffix) {
        // Keys from the list collide on purpose across parameters ("Key"/"key", composed/decomposed é):
        // a fresh namespace prefix per run keeps them independent of other tests.
        String key = suffix.length() * 4 >= DedupLimits.MAX_KEY_BYTES ? suffix : runId + suffix;

        Claim claim = claimed(store.claim(key, LONG));
        assertThat(claim.key()).isEqualTo(key);
        assertThat(duplicate(store.claim(key, LONG)).key()).isEqualTo(key);
        assertThat(store.complete(claim, LONG, RESULT)).isTrue();
    }

    @Test
    @DisplayName("keys differing only in case or Unicode normalization are different keys")
    void keysAreComparedExactly() {
        for (List<String> pair : List.of(List.of("Key", "key"), List.of("e\u0301", "\u00e9"), List.of("a:b", "a:b "))) {
            claimed(store.claim(runId + pair.get(0), LONG));
            claimed(store.claim(runId + pair.get(1), LONG));
        }
    }

    // ----- discovery and lifecycle -------------------------------------------------------------------------------

    @Test
    @DisplayName("the store opens through DedupStores.open by URI, in the URI's namespace")
    void opensThroughDiscovery() {
        DedupStore discovered = track(DedupStores.open(storeUri(namespace + "-uri")));

        assertThat(discovered.namespace()).isEqualTo(namespace + "-uri");
        String key = newKey();
        assertThat(discovered.claim(key, LONG)).isInstanceOf(Claim.class);
        assertThat(discovered.claim(key, LONG)).isInstanceOf(Duplicate.class);
    }

    @Test
    @DisplayName("an unknown scheme fails fast and lists the providers found, this store's among them")
    void unknownSchemeListsProviders() {
        String scheme = StoreUri.schemeOf(storeUri(namespace));

        assertThatThrownBy(() -> DedupStores.open("nosuchstore://host/db"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("nosuchstore")
                .hasMessageContaining(scheme);
    }

    @Test
    @DisplayName("a closed store refuses further calls")
    void closedStoreRefusesCalls() {
        DedupStore closing = open(namespace + "-closed");
        Claim claim = claimed(closing.claim(newKey(), LONG));
        closing.close();
        closing.close();

        assertThatThrownBy(() -> closing.claim(newKey(), LONG)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> closing.complete(claim, LONG, null)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> closing.fail(claim, LONG, null)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> closing.release(claim)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> closing.extend(claim, LONG)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> closing.claimAll(List.of(newKey()), LONG))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> closing.inspect(claim.key())).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> closing.forget(claim.key())).isInstanceOf(IllegalStateException.class);
    }

}
