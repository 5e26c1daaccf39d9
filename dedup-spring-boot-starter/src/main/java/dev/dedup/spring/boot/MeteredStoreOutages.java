package dev.dedup.spring.boot;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Counts requests that met an unreachable store, as {@code dedup.http.store.unavailable} tagged
 * {@code action=rejected} (answered 503) or {@code action=passed-through} (fail-open), in the application's
 * {@link MeterRegistry}, looked up at the first outage.
 */
public class MeteredStoreOutages implements StoreOutageListener {
    /** The counter's name. */
    public static final String METER = "dedup.http.store.unavailable";

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
}
