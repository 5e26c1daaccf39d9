package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DedupKeysTest {

    @Test
    void compositeKeysNeverRunIntoEachOther() {
        assertThat(DedupKeys.of("a|b", "c")).isNotEqualTo(DedupKeys.of("a", "b|c"));
        assertThat(DedupKeys.of("a\\", "|b")).isNotEqualTo(DedupKeys.of("a\\|", "b"));
        assertThat(DedupKeys.of("orders", "eu", "42")).isEqualTo("orders|eu|42");
    }

    @Test
    void longKeysAreHashedToAFixedLength() {
        String longKey = "k".repeat(DedupLimits.MAX_KEY_BYTES + 1);

        String fitted = DedupKeys.fit(longKey);

        assertThat(fitted).startsWith("sha256:").hasSize(50).isEqualTo(DedupKeys.hash(longKey));
        assertThat(DedupKeys.fit("short")).isEqualTo("short");
        assertThat(DedupLimits.checkKey(fitted)).isEqualTo(fitted);
        assertThat(DedupKeys.of("x".repeat(600), "y").getBytes(StandardCharsets.UTF_8)).hasSize(50);
    }

    @Test
    void rejectsMissingParts() {
        assertThatThrownBy(DedupKeys::of).hasMessageContaining("at least one part");
        assertThatThrownBy(() -> DedupKeys.of("a", null)).hasMessageContaining("parts[1]");
    }
}
