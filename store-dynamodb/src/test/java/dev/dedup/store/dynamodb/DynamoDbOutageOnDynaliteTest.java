package dev.dedup.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.tck.ServerOutages;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** Stops the emulator mid-run and starts it again through the harness script (its tables live on disk). */
class DynamoDbOutageOnDynaliteTest {
    @BeforeAll
    static void prepare() {
        ServerOutages.script();
        try (DynamoDbClient client = DynamoDbTestSupport.client(Duration.ofSeconds(10))) {
            DynamoDbDedupTables.create(client, DynamoDbTestSupport.TABLE);
        }
    }

    @AfterAll
    static void restart() {
        ServerOutages.resume("dynalite");
    }

    @Test
    @DisplayName("a stopped endpoint fails claims within the timeout, retryably; after restart claims work, none lost")
    void ridesOutAnOutage() throws Exception {
        String uri = DynamoDbTestSupport.uri(DynamoDbTestSupport.TABLE, "outage-" + System.nanoTime()) + "&timeout=1s";
        try (DedupStore store = DedupStores.open(uri)) {
            assertThat(store.claim("before", Duration.ofMinutes(10))).isInstanceOf(Claim.class);

            ServerOutages.pause("dynalite");
            long started = System.nanoTime();
            assertThatThrownBy(() -> store.claim("during", Duration.ofMinutes(10)))
                    .isInstanceOf(DedupStoreException.class)
                    .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                    .satisfies(e -> assertThat(e.getCause()).isNotNull());
            long failedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertThat(failedAfterMillis).as("failed within the 1 s call timeout, plus slack").isLessThan(3_000);

            ServerOutages.resume("dynalite");
            Duration recovery = ServerOutages.awaitRecovery(() -> store.claim("after", Duration.ofMinutes(10)),
                    Duration.ofSeconds(30));
            assertThat(store.claim("before", Duration.ofMinutes(10))).as("the claim made before the outage")
                    .isInstanceOf(Duplicate.class);
            System.out.printf("dynalite outage: claim failed after %d ms; first claim after restart %d ms after resume%n",
                    failedAfterMillis, recovery.toMillis());
        }
    }
}
