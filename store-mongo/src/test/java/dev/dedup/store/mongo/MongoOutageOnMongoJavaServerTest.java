package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Stops the in-process mongo-java-server 1.47.0 mid-run ({@code shutdownNow()}: the port closes and every connection
 * drops) and starts a new one on the same port. Always in-process, whatever DEDUP_TEST_MONGO_URL says: the test must
 * stop and start the server. The restarted server is empty (its backend is in memory); a real mongod keeps its data.
 */
class MongoOutageOnMongoJavaServerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** Each failing call must end within the timeout plus this much. */
    private static final Duration SLACK = Duration.ofSeconds(2);
    private static final Duration LEASE = Duration.ofMinutes(1);

    private MongoTestServer server;

    @AfterEach
    void stopServer() {
        server.close();
    }

    @Test
    @DisplayName("while the server is down claims fail with a retryable DedupStoreException within timeout + 2 s; then they succeed again")
    void ridesOutAnOutage() throws Exception {
        server = MongoTestServer.startInProcess();
        String uri = server.url() + "/?database=dedup_outage&namespace=outage-uri&timeout=1s&createIndexes=true";
        // The application's own client keeps the driver's defaults (30 s server selection): the store's timeout
        // bounds its calls all the same.
        try (DedupStore byUri = DedupStores.open(uri); MongoClient appClient = MongoClients.create(server.url())) {
            DedupStore explicit = MongoDedupStore.builder(appClient, "dedup_outage").namespace("outage-explicit")
                    .timeout(TIMEOUT).build();
            Claim before = (Claim) byUri.claim("before", LEASE);
            assertThat(explicit.claim("before", LEASE)).isInstanceOf(Claim.class);

            server.stop();
            List<Long> failures = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                String key = "during-" + i;
                failures.add(failsRetryably(() -> byUri.claim(key, LEASE)));
                failures.add(failsRetryably(() -> explicit.claim(key, LEASE)));
            }
            failures.add(failsRetryably(() -> byUri.claimAll(List.of("x", "y"), LEASE)));
            failures.add(failsRetryably(() -> byUri.complete(before, LEASE, null)));

            server.restart();
            long restarted = System.nanoTime();
            long uriBack = firstSuccess(() -> byUri.claim("after", LEASE), restarted);
            long explicitBack = firstSuccess(() -> explicit.claim("after", LEASE), restarted);

            System.out.printf("mongo outage (mongo-java-server in-process, timeout=1s): %d calls failed retryably in"
                    + " %s ms each (max %d ms); first claim after the restart: %d ms (URI store), %d ms (explicit"
                    + " store on a default client)%n", failures.size(), failures,
                    failures.stream().mapToLong(Long::longValue).max().orElseThrow(), uriBack, explicitBack);
        }
    }

    /** Runs a call that must fail with a retryable DedupStoreException in time; returns how long it took, in ms. */
    private static long failsRetryably(Runnable call) {
        long started = System.nanoTime();
        DedupStoreException failure = null;
        try {
            call.run();
        } catch (DedupStoreException e) {
            failure = e;
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(failure).as("a call while the server is down").isNotNull();
        assertThat(failure.isRetryable()).as("retryable: " + failure).isTrue();
        assertThat(failure.getCause()).isInstanceOf(MongoException.class);
        assertThat(millis).as("milliseconds until the call failed").isLessThan(TIMEOUT.plus(SLACK).toMillis());
        return millis;
    }

    /** Retries {@code claim} until it succeeds (at most 30 s); returns the ms since {@code since}. */
    private static long firstSuccess(Supplier<Object> claim, long since) throws InterruptedException {
        while (System.nanoTime() - since < TimeUnit.SECONDS.toNanos(30)) {
            try {
                assertThat(claim.get()).isInstanceOf(Claim.class);
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
            } catch (DedupStoreException stillDown) {
                assertThat(stillDown.isRetryable()).isTrue();
                Thread.sleep(50);
            }
        }
        throw new AssertionError("claims did not succeed within 30 s of the restart");
    }
}
