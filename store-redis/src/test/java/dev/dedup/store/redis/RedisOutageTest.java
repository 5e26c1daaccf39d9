package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.tck.ServerOutages;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Stops the test Redis mid-run and starts it again through the harness script. */
class RedisOutageTest {
    @BeforeAll
    static void findTheHarness() {
        ServerOutages.script();
        RedisTestSupport.standaloneUrl();
    }

    @AfterAll
    static void restart() {
        ServerOutages.resume("redis");
    }

    @Test
    @DisplayName("after an outage longer than 10 s, a store opened by URI serves within 1 s of the server's return")
    void recoversQuicklyAfterALongOutage() throws Exception {
        String uri = RedisTestSupport.standaloneUrl() + "?namespace=long-outage&timeout=1s";
        try (DedupStore store = DedupStores.open(uri)) {
            assertThat(store.claim("before-" + System.nanoTime(), Duration.ofMinutes(1))).isInstanceOf(Claim.class);

            ServerOutages.pause("redis");
            // Long enough for an unbounded exponential back-off to reach sleeps of several seconds.
            Thread.sleep(12_000);
            ServerOutages.resume("redis");
            Duration recovery = ServerOutages.awaitRecovery(
                    () -> store.claim("after-" + System.nanoTime(), Duration.ofMinutes(1)), Duration.ofSeconds(1));
            System.out.printf("redis 12 s outage: first claim %d ms after resume returned%n", recovery.toMillis());
        }
    }

    @Test
    @DisplayName("while Redis is down every call fails fast with a retryable DedupStoreException; then it recovers")
    void ridesOutAnOutage() throws Exception {
        try (DedupStore store = DedupStores.open(RedisTestSupport.standaloneUrl() + "?namespace=outage&timeout=1s")) {
            assertThat(store.claim("before-" + System.nanoTime(), Duration.ofMinutes(1))).isInstanceOf(Claim.class);

            ServerOutages.pause("redis");
            long started = System.nanoTime();
            int failures = 0;
            for (int i = 0; i < 2_000; i++) {
                String key = "during-" + i;
                assertThatThrownBy(() -> store.claim(key, Duration.ofMinutes(1)))
                        .isInstanceOf(DedupStoreException.class)
                        .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                        .satisfies(e -> assertThat(e.getCause()).isNotNull());
                failures++;
            }
            long failingMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            // Rejected, not queued: 2,000 calls against a dead server finish far inside one call's 1 s timeout.
            assertThat(failingMillis).as("2,000 failed claims took").isLessThan(1_000);

            ServerOutages.resume("redis");
            Duration recovery = ServerOutages.awaitRecovery(
                    () -> store.claim("after-" + System.nanoTime(), Duration.ofMinutes(1)), Duration.ofSeconds(30));
            System.out.printf("redis outage: %d claims failed in %d ms; first claim after restart %d ms after resume%n",
                    failures, failingMillis, recovery.toMillis());
        }
    }
}
