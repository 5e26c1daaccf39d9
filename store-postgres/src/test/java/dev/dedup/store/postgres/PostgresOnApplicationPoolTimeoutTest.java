package dev.dedup.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.tck.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A store built on the application's own pool answers within the store's timeout, whatever the pool and the driver
 * wait: an application's HikariCP waits 30 s for a connection, and its driver has no socket timeout. The server is
 * reached through a {@link FaultProxy} that refuses, black-holes or holds replies. Without the bound, a black-holed
 * connect waits for ever: the timeout turns that into a failure.
 */
@Timeout(90)
class PostgresOnApplicationPoolTimeoutTest {
    private static final Duration STORE_TIMEOUT = Duration.ofSeconds(1);
    /** Far under the pool's 30 s and the held replies' 30 s; room for a loaded 2-core machine. */
    private static final Duration BOUND = Duration.ofSeconds(6);
    private static final Duration LEASE = Duration.ofSeconds(30);

    private FaultProxy proxy;
    private HikariDataSource applicationPool;

    @BeforeEach
    void proxy() {
        URI server = URI.create(PostgresTestSupport.jdbcUrl().substring("jdbc:".length()));
        proxy = FaultProxy.start(server.getHost(), server.getPort());
    }

    @AfterEach
    void close() {
        if (applicationPool != null) {
            applicationPool.close();
        }
        proxy.close();
    }

    @Test
    @DisplayName("HikariCP with its 30 s wait, the server down: the claim fails within the store's timeout, then serves again")
    void hikariWaitingThirtySecondsForAConnection() {
        DedupStore store = store(applicationPool());
        assertThat(store.claim(key(), LEASE)).isInstanceOf(Claim.class);

        proxy.refuseConnections(true);
        proxy.cutConnections();
        // The first may meet the cut connection and fail at once; the next ones wait for the pool to connect.
        for (int call = 0; call < 3; call++) {
            assertFailsWithinTheBound(store);
        }

        proxy.heal();
        assertServesAgain(store);
    }

    @Test
    @DisplayName("another pool whose connect never ends (a server that accepts and never answers): within the timeout")
    void aDataSourceWhoseConnectNeverEnds() {
        PGSimpleDataSource driver = driverThroughProxy();   // no login or socket timeout: the connect waits for ever
        DedupStore store = store(driver);
        assertThat(store.claim(key(), LEASE)).isInstanceOf(Claim.class);

        proxy.blackHole(true);
        assertFailsWithinTheBound(store);

        proxy.heal();
        assertServesAgain(store);
    }

    @Test
    @DisplayName("a pooled connection whose replies stop coming (and the query timeout's cancel with them): within the timeout")
    void aConnectionWhoseRepliesStop() {
        DedupStore store = store(applicationPool());
        assertThat(store.claim(key(), LEASE)).isInstanceOf(Claim.class);

        proxy.delayReplies(Duration.ofSeconds(30));
        assertFailsWithinTheBound(store);

        proxy.heal();
        proxy.cutConnections();   // the held replies would reach no one now
        assertServesAgain(store);
    }

    @Test
    @DisplayName("replies held while 8 callers claim at once: every claim, sent or waiting to go out together,"
            + " fails within the timeout's bound")
    void concurrentClaimsWhoseRepliesStop() throws Exception {
        DedupStore store = store(applicationPool());
        assertThat(store.claim(key(), LEASE)).isInstanceOf(Claim.class);

        proxy.delayReplies(Duration.ofSeconds(30));
        ExecutorService callers = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                calls.add(callers.submit(() -> assertFailsWithinTheBound(store)));
            }
            for (Future<?> call : calls) {
                call.get(30, TimeUnit.SECONDS);
            }
        } finally {
            callers.shutdownNow();
        }

        proxy.heal();
        proxy.cutConnections();
        assertServesAgain(store);
    }

    private static void assertFailsWithinTheBound(DedupStore store) {
        long started = System.nanoTime();
        Throwable failure = null;
        try {
            store.claim(key(), LEASE);
        } catch (Throwable e) {
            failure = e;
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        System.out.printf("claim failed after %d ms: %s%n", took.toMillis(), failure);
        assertThat(failure).isInstanceOfSatisfying(DedupStoreException.class,
                e -> assertThat(e.isRetryable()).as("retryable").isTrue());
        assertThat(took).as("time to fail, with a %s store timeout", STORE_TIMEOUT).isLessThan(BOUND);
    }

    /**
     * Claims until one succeeds, within 20 s: HikariCP backs off up to 5 s between failed connects (a store opened by
     * URI does not; see {@code PostgresOutageTest}), so the first claims after the server's return may still fail.
     */
    private static void assertServesAgain(DedupStore store) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            try {
                assertThat(store.claim(key(), LEASE)).isInstanceOf(Claim.class);
                return;
            } catch (DedupStoreException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    private static DedupStore store(DataSource dataSource) {
        return PostgresDedupStore.builder(dataSource).createSchema(true).timeout(STORE_TIMEOUT)
                .namespace("app-pool-" + UUID.randomUUID()).build();
    }

    /** As Spring Boot configures HikariCP by default: a 30 s wait for a connection, no socket timeout. */
    private HikariDataSource applicationPool() {
        HikariConfig config = new HikariConfig();
        config.setDataSource(driverThroughProxy());
        config.setMaximumPoolSize(2);
        config.setConnectionTimeout(30_000);
        applicationPool = new HikariDataSource(config);
        return applicationPool;
    }

    private PGSimpleDataSource driverThroughProxy() {
        URI server = URI.create(PostgresTestSupport.jdbcUrl().substring("jdbc:".length()));
        PGSimpleDataSource driver = new PGSimpleDataSource();
        driver.setUrl("jdbc:postgresql://" + proxy.host() + ":" + proxy.port() + server.getRawPath() + "?"
                + server.getRawQuery());
        return driver;
    }

    private static String key() {
        return "k-" + UUID.randomUUID();
    }
}
