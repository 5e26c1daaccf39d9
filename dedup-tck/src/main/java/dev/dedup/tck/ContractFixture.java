package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The hooks a store's test implements, and what the contract tests share: a fresh store per test in a random
 * namespace, random keys, and waiting out short leases.
 */
public abstract class ContractFixture {
    /** A lease that expires during the test; long enough for a slow round trip to finish inside it. */
    protected static final Duration SHORT = Duration.ofMillis(300);
    /** A lease that never expires during the test. */
    protected static final Duration LONG = Duration.ofMinutes(5);
    /** A retention that never expires during the test. */
    protected static final Duration VERY_LONG = Duration.ofDays(7);
    /** The longest {@link #sleepPast} waits (beyond the clock tolerance); many times {@link #SHORT}. */
    protected static final Duration LONGEST_WAIT = Duration.ofSeconds(10);

    private final List<DedupStore> opened = new ArrayList<>();

    /** The store under test, in {@link #namespace}. */
    protected DedupStore store;
    /** A random namespace for this test. */
    protected String namespace;
    /** A random prefix that keeps this test's fixed keys apart from other runs'. */
    protected String runId;

    /**
     * Opens the store under test in {@code namespace}, built the primary way (from a client object).
     *
     * @param namespace a fresh random namespace, {@code tck-} and 8 hex digits
     * @return a new open store; the fixture closes it after the test
     */
    protected abstract DedupStore openStore(String namespace);

    /**
     * A URI that {@code DedupStores.open} turns into the same kind of store, in {@code namespace}.
     *
     * @param namespace the namespace to put in the URI's {@code namespace} parameter
     * @return a URI reaching the same server as {@link #openStore}
     */
    protected abstract String storeUri(String namespace);

    /**
     * How far the store's clock may differ from this JVM's, plus one round trip. Expiry tests wait this much past
     * an expiry before claiming again.
     *
     * @return the tolerance; 100 ms unless overridden
     */
    protected Duration clockTolerance() {
        return Duration.ofMillis(100);
    }

    @BeforeEach
    final void openTheStore() {
        runId = randomId() + "-";
        namespace = "tck-" + randomId();
        store = open(namespace);
    }

    @AfterEach
    final void closeTheStores() {
        for (DedupStore each : opened) {
            each.close();
        }
        opened.clear();
    }

    /**
     * Opens another store (closed after the test).
     *
     * @param namespace the namespace of the new store; {@link #namespace} to share this test's records
     * @return a new open store from {@link #openStore}
     */
    protected final DedupStore open(String namespace) {
        return track(openStore(namespace));
    }

    /**
     * Closes {@code store} after the test, for stores a test opens itself, such as through a URI.
     *
     * @param store an open store
     * @return {@code store}, for chaining
     */
    protected final DedupStore track(DedupStore store) {
        opened.add(store);
        return store;
    }

    /** {@return a fresh key, unique to this test: the run's prefix and a random UUID} */
    protected final String newKey() {
        return runId + UUID.randomUUID();
    }

    /**
     * Asserts that a claim was won.
     *
     * @param result a claim's outcome
     * @return {@code result} as a {@link Claim}
     */
    protected static Claim claimed(ClaimResult result) {
        assertThat(result).as("claim result").isInstanceOf(Claim.class);
        return (Claim) result;
    }

    /**
     * Asserts that a claim was lost to a live record.
     *
     * @param result a claim's outcome
     * @return {@code result} as a {@link Duplicate}
     */
    protected static Duplicate duplicate(ClaimResult result) {
        assertThat(result).as("claim result").isInstanceOf(Duplicate.class);
        return (Duplicate) result;
    }

    /**
     * Sleeps until {@code expiresAt} has passed by the clock tolerance. Every expiry the kit waits out is one
     * {@link #SHORT} lease or retention away, so a wait of more than {@link #LONGEST_WAIT} fails at once: the store
     * stretched the duration (seconds taken for millis, the lease kept for the retention), and waiting it out would
     * stall the run for minutes.
     *
     * @param expiresAt the expiry to wait out, by the store's clock
     * @throws InterruptedException if interrupted while sleeping
     */
    protected final void sleepPast(Instant expiresAt) throws InterruptedException {
        long millis = Duration.between(Instant.now(), expiresAt.plus(clockTolerance())).toMillis();
        assertThat(Duration.ofMillis(millis))
                .as("wait until %s, an expiry the kit set %s or less from now", expiresAt, SHORT)
                .isLessThanOrEqualTo(LONGEST_WAIT.plus(clockTolerance()));
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }

    static String randomId() {
        return UUID.randomUUID().toString().substring(0, 8);
    }
}
