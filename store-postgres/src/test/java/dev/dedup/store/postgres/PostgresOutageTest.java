package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.tck.TestServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Stops the test PostgreSQL in the middle of a run and starts it again, through the harness script: claims fail
 * fast with a retryable DedupStoreException, nothing claimed is lost, and the store recovers on its own.
 */
class PostgresOutageTest {
    private static HikariDataSource pool;
    private static String script;

    @BeforeAll
    static void connect() {
        script = TestServers.require("the test-servers script (to stop and restart PostgreSQL)",
                "DEDUP_TEST_SERVERS_SCRIPT", null);
        pool = PostgresTestSupport.pool(4);
        pool.setConnectionTimeout(2_000);
        PostgresDedupStore.builder(pool).validateSchema(false).build().createSchema();
    }

    @AfterAll
    static void close() throws Exception {
        harness("resume"); // whatever happened, leave the server running for the next test class
        pool.close();
    }

    @Test
    @DisplayName("a stopped server fails claims within the timeout; after restart the store recovers, nothing lost")
    void ridesOutAnOutage() throws Exception {
        PostgresDedupStore store = PostgresDedupStore.builder(pool).namespace("outage-" + UUID.randomUUID()
                .toString().substring(0, 8)).timeout(Duration.ofSeconds(2)).build();
        List<String> claimed = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String key = "before-" + i;
            assertThat(store.claim(key, Duration.ofMinutes(10))).isInstanceOf(Claim.class);
            claimed.add(key);
        }

        harness("pause");
        long failing = System.nanoTime();
        assertThatThrownBy(() -> store.claim("during", Duration.ofMinutes(10)))
                .isInstanceOf(DedupStoreException.class)
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                .satisfies(e -> assertThat(e.getCause()).isNotNull());
        long failedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failing);
        assertThat(failedAfterMillis).as("failed within the 2 s timeout plus the pool's 2 s wait").isLessThan(6_000);

        harness("resume");
        long recovering = System.nanoTime();
        Claim after = null;
        while (after == null && System.nanoTime() - recovering < TimeUnit.SECONDS.toNanos(30)) {
            try {
                after = (Claim) store.claim("after", Duration.ofMinutes(10));
            } catch (DedupStoreException stillDown) {
                Thread.sleep(100);
            }
        }
        assertThat(after).as("a claim succeeds again after the restart").isNotNull();
        for (String key : claimed) {
            assertThat(store.claim(key, Duration.ofMinutes(10))).as(key).isInstanceOf(Duplicate.class);
        }
        System.out.printf("outage: claim failed after %d ms; first claim after restart %d ms after resume%n",
                failedAfterMillis, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - recovering));
    }

    private static void harness(String action) throws Exception {
        Process process = new ProcessBuilder("bash", script, action, "postgres").inheritIO().start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("test-servers.sh " + action + " postgres").isZero();
    }
}
