package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import java.time.Duration;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The store's health: claims a probe key of its own for a few seconds and releases it, the round trip every
 * request makes. Down when the store throws, when a fresh key cannot be claimed, or when no answer comes within the
 * wait: a health check never blocks longer than that, whatever the store's client does.
 */
public class DedupStoreHealthIndicator extends AbstractHealthIndicator {
    private final DedupStore store;
    private final StoreProbe probe;

    /**
     * Creates the indicator, waiting at most 5 s for the store.
     *
     * @param store the store to probe
     */
    public DedupStoreHealthIndicator(DedupStore store) {
        this(store, StoreTimeout.DEFAULT_HEALTH_WAIT);
    }

    /**
     * Creates the indicator.
     *
     * @param store the store to probe
     * @param wait the longest a check waits for the store's answer before reporting it down
     */
    public DedupStoreHealthIndicator(DedupStore store, Duration wait) {
        super("the dedup store health check failed");
        this.probe = new StoreProbe(store, wait);
        this.store = store;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws Exception {
        builder.withDetail("store", store.getClass().getSimpleName()).withDetail("namespace", store.namespace());
        String down = probe.whyDown();
        if (down == null) {
            builder.up();
        } else {
            builder.down().withDetail("probe", down);
        }
    }
}
