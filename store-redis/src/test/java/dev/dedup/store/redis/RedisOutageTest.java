package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.spi.DedupStore;
import dev.dedup.tck.TestServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Stops the test Redis mid-run and starts it again through the harness script. */
class RedisOutageTest {
    private static String script;

    @BeforeAll
    static void findTheHarness() {
        script = TestServers.require("the test-servers script (to stop and restart Redis)", "DEDUP_TEST_SERVERS_SCRIPT",
                null);
        RedisTestSupport.standaloneUrl();
    }

    @AfterAll
    static void restart() throws Exception {
        harness("resume");
    }

    @Test
    @DisplayName("while Redis is down every call fails fast with a retryable DedupStoreException; then it recovers")
    void ridesOutAnOutage() throws Exception {
        try (DedupStore store = DedupStores.open(RedisTestSupport.standaloneUrl() + "?namespace=outage&timeout=1s")) {
            assertThat(store.claim("before-" + System.nanoTime(), Duration.ofMinutes(1))).isInstanceOf(Claim.class);

            harness("pause");
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

            harness("resume");
            long recovering = System.nanoTime();
            Claim after = null;
            while (after == null && System.nanoTime() - recovering < TimeUnit.SECONDS.toNanos(30)) {
                try {
                    after = (Claim) store.claim("after-" + System.nanoTime(), Duration.ofMinutes(1));
                } catch (DedupStoreException stillDown) {
                    Thread.sleep(50);
                }
            }
            assertThat(after).as("claims succeed again after the restart").isNotNull();
            System.out.printf("redis outage: %d claims failed in %d ms; first claim after restart %d ms after resume%n",
                    failures, failingMillis, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - recovering));
        }
    }

    private static void harness(String action) throws Exception {
        Process process = new ProcessBuilder("bash", script, action, "redis").inheritIO().start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("test-servers.sh " + action + " redis").isZero();
    }
}
