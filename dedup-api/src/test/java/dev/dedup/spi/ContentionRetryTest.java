package dev.dedup.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.DedupStoreException;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class ContentionRetryTest {
    @Test
    @DisplayName("retries go on past any fixed count while time is left, each pause at most 5 ms")
    void retriesUntilTheDeadline() {
        ContentionRetry retry = ContentionRetry.within(Duration.ofSeconds(30));
        for (int i = 0; i < 100; i++) {
            assertThat(retry.nextPauseNanosOrGiveUp("store", "claim")).isBetween(0L, 5_000_000L);
        }
        assertThat(retry.attempts()).isEqualTo(101);
    }

    @Test
    @DisplayName("once the deadline has passed, the next lost race fails retryably, saying how often it lost")
    void givesUpRetryablyAtTheDeadline() throws InterruptedException {
        ContentionRetry retry = ContentionRetry.within(Duration.ofMillis(20));
        retry.pauseOrGiveUp("DynamoDB dedup store", "claim");
        Thread.sleep(30);

        assertThatThrownBy(() -> retry.pauseOrGiveUp("DynamoDB dedup store", "claim"))
                .isInstanceOf(DedupStoreException.class)
                .hasMessageContaining("DynamoDB dedup store claim found its record changed by concurrent writers 2"
                        + " times in a row within 20 ms")
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue());
    }

    @Test
    @DisplayName("a budget must be positive")
    void budgetMustBePositive() {
        assertThatThrownBy(() -> ContentionRetry.within(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
