package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Single claims from many threads at once go out together: fewer statements (connections taken) than claims, with
 * every claim's own owner, lease and fingerprint, and exactly one winner per key; a lone caller claims alone.
 */
class PostgresClaimCoalescingTest {
    private static final int THREADS = 32;
    private static final int CLAIMS_PER_THREAD = 20;

    private HikariDataSource pool;
    private final AtomicInteger borrowed = new AtomicInteger();
    private PostgresDedupStore store;
    private final String namespace = "coalesce-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void open() {
        pool = PostgresTestSupport.pool(16);
        store = PostgresDedupStore.builder(new CountingDataSource(pool, borrowed)).namespace(namespace)
                .createSchema(true).build();
        borrowed.set(0);
    }

    @AfterEach
    void close() {
        store.close();
        pool.close();
    }

    private static byte[] fingerprint(String key) {
        return ("fp-" + key).getBytes(StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("32 threads claiming at once share statements, and each claim keeps its own lease and fingerprint")
    void concurrentClaimsShareStatements() throws Exception {
        Map<String, Claim> claims = new ConcurrentHashMap<>();
        runTogether(thread -> {
            for (int i = 0; i < CLAIMS_PER_THREAD; i++) {
                String key = "k-" + thread + "-" + i;
                Duration lease = Duration.ofSeconds(60 + thread); // a lease of its own per thread
                Instant before = Instant.now();
                ClaimResult result = store.claim(key, lease, fingerprint(key));
                assertThat(result).as(key).isInstanceOf(Claim.class);
                Claim claim = (Claim) result;
                assertThat(claim.expiresAt()).as("%s's expiry", key)
                        .isAfter(before.plus(lease).minusMillis(500)).isBefore(Instant.now().plus(lease).plusMillis(500));
                claims.put(key, claim);
            }
        });
        int statements = borrowed.get();

        assertThat(claims).hasSize(THREADS * CLAIMS_PER_THREAD);
        assertThat(claims.values().stream().map(Claim::owner).distinct()).hasSize(claims.size());
        assertThat(statements).as("connections taken for %d claims", claims.size())
                .isLessThan(claims.size() / 2);
        for (var entry : claims.entrySet()) {
            Duplicate duplicate = (Duplicate) store.claim(entry.getKey(), Duration.ofMinutes(1));
            assertThat(duplicate.fingerprint()).as(entry.getKey())
                    .hasValueSatisfying(b -> assertThat(b).isEqualTo(fingerprint(entry.getKey())));
            assertThat(Duration.between(entry.getValue().expiresAt(), duplicate.expiresAt()).abs())
                    .isLessThan(Duration.ofMillis(5));
        }
    }

    @Test
    @DisplayName("32 threads racing for the same 8 keys at once: exactly one winner per key, the rest see its record")
    void racersOnSharedKeysGetOneWinnerEach() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            keys.add("shared-" + i);
        }
        Map<String, List<Claim>> winners = new ConcurrentHashMap<>();
        Map<String, List<byte[]>> seen = new ConcurrentHashMap<>();
        runTogether(thread -> {
            for (String key : keys) {
                ClaimResult result = store.claim(key, Duration.ofMinutes(1), fingerprint(key + "/" + thread));
                if (result instanceof Claim claim) {
                    winners.computeIfAbsent(key, k -> new java.util.concurrent.CopyOnWriteArrayList<>()).add(claim);
                } else {
                    Duplicate duplicate = (Duplicate) result;
                    assertThat(duplicate.state()).isEqualTo(RecordState.IN_PROGRESS);
                    seen.computeIfAbsent(key, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                            .add(duplicate.fingerprint().orElseThrow());
                }
            }
        });

        for (String key : keys) {
            assertThat(winners.get(key)).as("winners of %s", key).hasSize(1);
            assertThat(seen.get(key)).as("losers of %s", key).hasSize(THREADS - 1);
            byte[] winnersFingerprint = ((Duplicate) store.claim(key, Duration.ofMinutes(1))).fingerprint()
                    .orElseThrow();
            assertThat(seen.get(key)).allSatisfy(b -> assertThat(b).isEqualTo(winnersFingerprint));
        }
    }

    @Test
    @DisplayName("a lone caller claims alone: one statement per claim")
    void loneCallerClaimsAlone() {
        for (int i = 0; i < 50; i++) {
            assertThat(store.claim("alone-" + i, Duration.ofMinutes(1))).isInstanceOf(Claim.class);
        }

        assertThat(borrowed.get()).isEqualTo(50);
    }

    private interface PerThread {
        void run(int thread) throws Exception;
    }

    private static void runTogether(PerThread work) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        try {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                done.add(threads.submit(() -> {
                    start.await();
                    work.run(thread);
                    return null;
                }));
            }
            for (Future<?> each : done) {
                each.get(60, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /** The application's pool, counting the connections the store takes: one per statement it sends. */
    private record CountingDataSource(DataSource pool, AtomicInteger borrowed) implements DataSource {
        @Override
        public Connection getConnection() throws SQLException {
            borrowed.incrementAndGet();
            return pool.getConnection();
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            borrowed.incrementAndGet();
            return pool.getConnection(user, password);
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return pool.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            pool.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            pool.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return pool.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return pool.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            return pool.unwrap(type);
        }

        @Override
        public boolean isWrapperFor(Class<?> type) throws SQLException {
            return pool.isWrapperFor(type);
        }
    }
}
