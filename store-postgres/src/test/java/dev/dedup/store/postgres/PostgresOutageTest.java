package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.tck.ServerOutages;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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

    @BeforeAll
    static void connect() {
        ServerOutages.script();
        pool = PostgresTestSupport.pool(4);
        pool.setConnectionTimeout(2_000);
        PostgresDedupStore.builder(pool).validateSchema(false).build().createSchema();
    }

    @AfterAll
    static void close() {
        ServerOutages.resume("postgres"); // whatever happened, leave the server running for the next test class
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

        ServerOutages.pause("postgres");
        long failing = System.nanoTime();
        assertThatThrownBy(() -> store.claim("during", Duration.ofMinutes(10)))
                .isInstanceOf(DedupStoreException.class)
                .satisfies(e -> assertThat(((DedupStoreException) e).isRetryable()).isTrue())
                .satisfies(e -> assertThat(e.getCause()).isNotNull());
        long failedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failing);
        assertThat(failedAfterMillis).as("failed within the 2 s timeout plus the pool's 2 s wait").isLessThan(6_000);

        ServerOutages.resume("postgres");
        Duration recovery = ServerOutages.awaitRecovery(() -> store.claim("after", Duration.ofMinutes(10)),
                Duration.ofSeconds(30));
        for (String key : claimed) {
            assertThat(store.claim(key, Duration.ofMinutes(10))).as(key).isInstanceOf(Duplicate.class);
        }
        System.out.printf("outage: claim failed after %d ms; first claim after restart %d ms after resume%n",
                failedAfterMillis, recovery.toMillis());
    }

    @Test
    @DisplayName("a store opened by URI serves again within 1 s of the server's return, after a long, busy outage")
    void uriStoreRecoversWithinOneSecond() throws Exception {
        String namespace = "outage-uri-" + UUID.randomUUID().toString().substring(0, 8);
        try (DedupStore store = DedupStores.open(PostgresTestSupport.jdbcUrl() + "&namespace=" + namespace
                + "&timeout=1s&poolSize=4")) {
            assertThat(store.claim("before", Duration.ofMinutes(10))).isInstanceOf(Claim.class);

            ServerOutages.pause("postgres");
            // Claims keep coming during the outage, as from a consumer retrying: a pool that backs off between
            // connection attempts (Hikari: up to 5 s) has backed off all the way by the end of it.
            AtomicBoolean down = new AtomicBoolean(true);
            AtomicInteger failed = new AtomicInteger();
            Thread busy = new Thread(() -> {
                while (down.get()) {
                    try {
                        store.claim("during-" + UUID.randomUUID(), Duration.ofMinutes(10));
                    } catch (DedupStoreException expected) {
                        failed.incrementAndGet();
                    }
                }
            });
            busy.start();
            Thread.sleep(12_000);

            ServerOutages.resume("postgres");
            down.set(false);
            Duration recovery = ServerOutages.awaitRecovery(() -> store.claim("after", Duration.ofMinutes(10)),
                    Duration.ofSeconds(30));
            System.out.printf("URI store: %d claims failed during a 12 s outage; first claim %d ms after resume%n",
                    failed.get(), recovery.toMillis());
            busy.join();
            assertThat(failed.get()).as("claims failed during the outage").isPositive();
            assertThat(recovery).as("first claim after the server's return").isLessThan(Duration.ofSeconds(1));
            assertThat(store.claim("before", Duration.ofMinutes(10))).isInstanceOf(Duplicate.class);
        }
    }
}
