package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.ClaimResult;
import dev.dedup.DedupStoreException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Outages for store reliability tests: stops and restarts a real server through the harness script
 * ({@code scripts/test-servers.sh pause|resume <server>}), and waits for a store to recover.
 */
public final class ServerOutages {
    private static final String SCRIPT_VARIABLE = "DEDUP_TEST_SERVERS_SCRIPT";

    private ServerOutages() {}

    /**
     * {@return the harness script's path, from {@code DEDUP_TEST_SERVERS_SCRIPT}; fails under CI without it, like a
     * missing server, and skips the test elsewhere}
     */
    public static String script() {
        return TestServers.require("the test-servers script (to stop and restart servers)", SCRIPT_VARIABLE, null);
    }

    /**
     * Stops a server, keeping its data.
     *
     * @param server the harness's name for it: postgres, redis, redis-cluster:&lt;port&gt;, dynalite
     */
    public static void pause(String server) {
        harness("pause", server);
    }

    /**
     * Starts a server again, and waits until it answers.
     *
     * @param server the harness's name for it, as given to {@link #pause}
     */
    public static void resume(String server) {
        harness("resume", server);
    }

    /**
     * Claims until a claim succeeds, treating {@link DedupStoreException} as "still down"; returns how long the
     * recovery took and fails if it takes over {@code limit}.
     *
     * @param claim makes one claim on the store under test; any exception but {@link DedupStoreException} ends the
     *     wait at once
     * @param limit the longest the store may take to serve again
     * @return how long it took until a claim succeeded
     * @throws InterruptedException if interrupted between attempts
     * @throws AssertionError if no claim succeeded within {@code limit}
     */
    public static Duration awaitRecovery(Supplier<ClaimResult> claim, Duration limit) throws InterruptedException {
        long started = System.nanoTime();
        while (System.nanoTime() - started < limit.toNanos()) {
            try {
                claim.get();
                return Duration.ofNanos(System.nanoTime() - started);
            } catch (DedupStoreException stillDown) {
                Thread.sleep(50);
            }
        }
        throw new AssertionError("the store did not recover within " + limit);
    }

    private static void harness(String action, String server) {
        try {
            Process process = new ProcessBuilder("bash", script(), action, server).inheritIO().start();
            assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("test-servers.sh " + action + " " + server
                    + " finished").isTrue();
            assertThat(process.exitValue()).as("test-servers.sh " + action + " " + server).isZero();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("could not run the harness script", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running the harness script", e);
        }
    }
}
