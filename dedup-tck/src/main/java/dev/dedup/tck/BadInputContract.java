package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupLimits;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad input: every store rejects it alike, naming the value and the allowed range, and nothing stored changes. */
abstract class BadInputContract extends UriContract {

    static Stream<Arguments> badKeys() {
        return Stream.of(
                Arguments.of(null, "must not be null"),
                Arguments.of("", "must not be blank"),
                Arguments.of(" \t\n", "must not be blank"),
                Arguments.of("a\0b", "U+0000"),
                Arguments.of("broken\uD83D", "unpaired surrogate"),
                Arguments.of("\uDC00tail", "unpaired surrogate"),
                Arguments.of("x".repeat(DedupLimits.MAX_KEY_BYTES + 1), "at most " + DedupLimits.MAX_KEY_BYTES),
                Arguments.of("é".repeat(DedupLimits.MAX_KEY_BYTES / 2 + 1), "at most " + DedupLimits.MAX_KEY_BYTES));
    }

    @ParameterizedTest
    @MethodSource("badKeys")
    @DisplayName("bad keys are rejected with the reason, by claim, claimAll, inspect and forget")
    void rejectsBadKeys(String key, String reason) {
        assertThatThrownBy(() -> store.claim(key, LONG))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key")
                .hasMessageContaining(reason);
        assertThatThrownBy(() -> store.inspect(key))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key")
                .hasMessageContaining(reason);
        assertThatThrownBy(() -> store.forget(key))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key")
                .hasMessageContaining(reason);

        String before = newKey();
        List<String> batch = new ArrayList<>(List.of(before));
        batch.add(key);
        assertThatThrownBy(() -> store.claimAll(batch, LONG))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keys[1]")
                .hasMessageContaining(reason);
        assertThat(store.claim(before, LONG)).as("nothing of a rejected batch is claimed").isInstanceOf(Claim.class);
    }

    @Test
    @DisplayName("an empty or too long fingerprint is rejected naming the limit, and nothing is claimed")
    void rejectsBadFingerprints() {
        String key = newKey();
        byte[] tooLong = new byte[DedupLimits.MAX_FINGERPRINT_BYTES + 1];

        assertThatThrownBy(() -> store.claim(key, LONG, tooLong))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fingerprint")
                .hasMessageContaining("1 to " + DedupLimits.MAX_FINGERPRINT_BYTES + " bytes")
                .hasMessageContaining("but was " + tooLong.length);
        assertThatThrownBy(() -> store.claim(key, LONG, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fingerprint")
                .hasMessageContaining("but was 0");

        Claim claim = claimed(store.claim(key, LONG, new byte[DedupLimits.MAX_FINGERPRINT_BYTES]));
        assertThat(claim.key()).as("nothing was stored by the rejected claims").isEqualTo(key);
    }

    static Stream<Arguments> badDurations() {
        return Stream.of(
                Arguments.of(null, "null"),
                Arguments.of(Duration.ZERO, "PT0S"),
                Arguments.of(Duration.ofSeconds(-5), "PT-5S"),
                Arguments.of(Duration.ofNanos(999_999), "PT0.000999999S"),
                Arguments.of(Duration.ofDays(367), "PT8808H"));
    }

    @ParameterizedTest
    @MethodSource("badDurations")
    @DisplayName("bad leases are rejected with the value and the range, and nothing is claimed")
    void rejectsBadLeases(Duration lease, String shown) {
        String key = newKey();

        assertThatThrownBy(() -> store.claim(key, lease)).satisfies(e -> isRangeError(e, "lease", shown));
        assertThatThrownBy(() -> store.claimAll(List.of(key), lease)).satisfies(e -> isRangeError(e, "lease", shown));

        assertThat(store.claim(key, LONG)).isInstanceOf(Claim.class);
    }

    @ParameterizedTest
    @MethodSource("badDurations")
    @DisplayName("bad retentions and extensions are rejected and leave the claim as it was")
    void rejectsBadRetentionsAndExtensions(Duration duration, String shown) {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));

        assertThatThrownBy(() -> store.complete(claim, duration, null)).satisfies(e -> isRangeError(e, "retention", shown));
        assertThatThrownBy(() -> store.extend(claim, duration)).satisfies(e -> isRangeError(e, "lease", shown));

        Duplicate unchanged = duplicate(store.claim(key, LONG));
        assertThat(unchanged.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(Duration.between(claim.expiresAt(), unchanged.expiresAt()).abs()).isLessThan(Duration.ofMillis(5));
        assertThat(store.complete(claim, LONG, null)).isTrue();
    }

    @Test
    @DisplayName("the shortest and longest durations are accepted")
    void acceptsTheDurationBounds() {
        assertThat(store.claim(newKey(), DedupLimits.MIN_DURATION)).isInstanceOf(Claim.class);
        Claim claim = claimed(store.claim(newKey(), DedupLimits.MAX_DURATION));
        assertThat(store.extend(claim, DedupLimits.MAX_DURATION)).isTrue();
        assertThat(store.complete(claim, DedupLimits.MAX_DURATION, null)).isTrue();
    }

    @Test
    @DisplayName("an oversized result is rejected with its size and the limit, and the claim can still complete")
    void rejectsOversizedResult() {
        String key = newKey();
        Claim claim = claimed(store.claim(key, LONG));
        byte[] oversized = new byte[DedupLimits.MAX_RESULT_BYTES + 1];

        assertThatThrownBy(() -> store.complete(claim, LONG, oversized))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(oversized.length))
                .hasMessageContaining(String.valueOf(DedupLimits.MAX_RESULT_BYTES));

        assertThat(duplicate(store.claim(key, LONG)).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(store.complete(claim, LONG, new byte[] {1, 2})).isTrue();
    }

    @Test
    @DisplayName("a null claim is rejected by complete, release and extend")
    void rejectsNullClaims() {
        assertThatThrownBy(() -> store.complete(null, LONG, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claim");
        assertThatThrownBy(() -> store.release(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claim");
        assertThatThrownBy(() -> store.extend(null, LONG)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claim");
    }

    @Test
    @DisplayName("claimAll rejects a null list and a batch over the limit, claiming nothing")
    void rejectsBadBatches() {
        assertThatThrownBy(() -> store.claimAll(null, LONG)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keys must not be null");

        String[] keys = new String[DedupLimits.MAX_BATCH_KEYS + 1];
        Arrays.setAll(keys, i -> newKey());
        assertThatThrownBy(() -> store.claimAll(Arrays.asList(keys), LONG))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(DedupLimits.MAX_BATCH_KEYS))
                .hasMessageContaining(String.valueOf(keys.length));
        assertThat(store.claim(keys[0], LONG)).isInstanceOf(Claim.class);
    }

    private static void isRangeError(Throwable error, String name, String shown) {
        assertThat(error).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(name)
                .hasMessageContaining(shown)
                .hasMessageContaining("1 ms to 366 days");
    }
}
