package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.spi.DedupStore;
import dev.dedup.tck.TestServers;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** Stops the emulator mid-run and starts it again through the harness script (its tables live on disk). */
class DynamoDbOutageOnDynaliteTest {
    private static String script;

    @BeforeAll
    static void prepare() {
        script = TestServers.require("the test-servers script (to stop and restart dynalite)",
                "DEDUP_TEST_SERVERS_SCRIPT", null);
        try (DynamoDbClient client = DynamoDbTestSupport.client(Duration.ofSeconds(10))) {
            DynamoDbDedupTables.create(client, DynamoDbTestSupport.TABLE);
        }
    }

    @AfterAll
    static void restart() throws Exception {
        harness("resume");
    }

    @Test
    @DisplayName("a stopped endpoint fails claims within the timeout, retryably; after restart claims work, none lost")
    void ridesOutAnOutage() throws Exception {
        String uri = DynamoDbTestSupport.uri(DynamoDbTestSupport.TABLE, "outage-" + System.nanoTime()) + "&timeout=1s";
        try (DedupStore store = DedupStores.open(uri)) {
            assertThat(store.claim("before", Duration.ofMinutes(10))).isInstanceOf(Claim.class);

            harness("pause");
            long started = System.nanoTime();
            assertThatThrownBy(() -> store.claim("during", Duration.ofMinutes(10)))
                    .isInstanceOf(DedupStoreException.class)
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                    .satisfies(e -> assertThat(e.getCause()).isNotNull());
            long failedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertThat(failedAfterMillis).as("failed within the 1 s call timeout, plus slack").isLessThan(3_000);

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
            assertThat(after).as("claims succeed again after the restart").isNotNull();
            assertThat(store.claim("before", Duration.ofMinutes(10))).as("the claim made before the outage")
                    .isInstanceOf(Duplicate.class);
            System.out.printf("dynalite outage: claim failed after %d ms; first claim after restart %d ms after resume%n",
                    failedAfterMillis, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - recovering));
        }
    }

    private static void harness(String action) throws Exception {
        Process process = new ProcessBuilder("bash", script, action, "dynalite").inheritIO().start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("test-servers.sh " + action + " dynalite").isZero();
    }
}
