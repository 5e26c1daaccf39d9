package dev.dedup.spring.boot;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Counts requests that met an unreachable store, as {@code dedup.http.store.unavailable} tagged
 * {@code action=rejected} (answered 503) or {@code action=passed-through} (fail-open), and requests without a key
 * that ran unprotected, as {@code dedup.http.requests.without-key}, in the application's {@link MeterRegistry},
 * looked up at the first event.
 */
public class MeteredStoreOutages implements StoreOutageListener {
    /** The counter's name. */
    public static final String METER = "dedup.http.store.unavailable";
    /** The counter of protected requests that came without a key and ran unprotected. */
    public static final String WITHOUT_KEY_METER = "dedup.http.requests.without-key";

    private final ObjectProvider<MeterRegistry> registry;

    /**
     * Creates the listener.
     *
     * @param registry the application's registry, if it has one; without one, outages are only logged
     */
    public MeteredStoreOutages(ObjectProvider<MeterRegistry> registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void storeUnavailable(boolean passedThrough, Throwable failure) {
        MeterRegistry meters = registry.getIfAvailable();
        if (meters != null) {
            Counter.builder(METER)
                    .description("Protected HTTP requests whose key could not be claimed because the store failed")
                    .tag("action", passedThrough ? "passed-through" : "rejected")
                    .register(meters)
                    .increment();
        }
    }

    @Override
    public void ranWithoutKey() {
        MeterRegistry meters = registry.getIfAvailable();
        if (meters != null) {
            Counter.builder(WITHOUT_KEY_METER)
                    .description("Protected HTTP requests without a key that ran without deduplication"
                            + " (dedup.http.key-required=false)")
                    .register(meters)
                    .increment();
        }
    }
}
