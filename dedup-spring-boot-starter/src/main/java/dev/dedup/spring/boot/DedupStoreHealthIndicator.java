package dev.dedup.spring.boot;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The store's health: claims a probe key of its own for a few seconds and releases it, the round trip every
 * request makes. Down when the store throws, or when a fresh key cannot be claimed.
 */
public class DedupStoreHealthIndicator extends AbstractHealthIndicator {
    private static final Duration PROBE_LEASE = Duration.ofSeconds(10);
    private final DedupStore store;

    /**
     * Creates the indicator.
     *
     * @param store the store to probe
     */
    public DedupStoreHealthIndicator(DedupStore store) {
        super("the dedup store health check failed");
        this.store = Objects.requireNonNull(store, "store");
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("store", store.getClass().getSimpleName()).withDetail("namespace", store.namespace());
        ClaimResult probe = store.claim("dedup-health-probe:" + UUID.randomUUID(), PROBE_LEASE);
        if (probe instanceof Claim claim) {
            store.release(claim);
            builder.up();
        } else {
            builder.down().withDetail("probe", "a fresh probe key was reported as a duplicate");
        }
    }
}
