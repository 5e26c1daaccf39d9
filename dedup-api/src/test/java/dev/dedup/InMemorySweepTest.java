package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.memory.InMemoryDedupStore;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class InMemorySweepTest {

    @Test
    @DisplayName("expired records are swept as the map grows, so memory stays bounded under sustained claims")
    void staysBounded() {
        ManualClock clock = new ManualClock();
        InMemoryDedupStore store = new InMemoryDedupStore("sweep", clock);

        for (int i = 0; i < 100_000; i++) {
            store.claim("k-" + i, Duration.ofSeconds(1));
            clock.advance(Duration.ofMillis(10)); // about 100 records live at any moment
        }

        assertThat(store.size()).as("records held after 100,000 short claims").isLessThan(2 * 1024 + 100);
    }

    @Test
    @DisplayName("live records are never swept")
    void keepsLiveRecords() {
        ManualClock clock = new ManualClock();
        InMemoryDedupStore store = new InMemoryDedupStore("sweep", clock);
        for (int i = 0; i < 5_000; i++) {
            store.claim("k-" + i, Duration.ofHours(1));
        }

        assertThat(store.sweepExpired()).isZero();
        assertThat(store.size()).isEqualTo(5_000);
        assertThat(store.claim("k-0", Duration.ofHours(1))).isInstanceOf(Duplicate.class);
    }
}
