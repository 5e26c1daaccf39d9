package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code dedup.store.timeout}, handed to whichever store the starter builds, in one place: a value the store refuses
 * fails the start naming the property, and the health check waits no longer than the store may.
 */
final class StoreTimeout {
    static final String PROPERTY = "dedup.store.timeout";
    /** The health check's wait when the property is unset: the longest default of the stores (PostgreSQL's). */
    static final Duration DEFAULT_HEALTH_WAIT = Duration.ofSeconds(5);

    private StoreTimeout() {}

    /** Hands the property, when set, to a store builder's {@code timeout} setter. */
    static void applyTo(DedupProperties properties, Consumer<Duration> builderTimeout) {
        Duration timeout = properties.getStore().getTimeout();
        if (timeout == null) {
            return;
        }
        try {
            builderTimeout.accept(timeout);
        } catch (IllegalArgumentException e) {
            throw new DedupConfigurationException(PROPERTY + "=" + timeout + " does not suit the store: "
                    + e.getMessage());
        }
    }

    /** Adds the property, when set, to a store URI's parameters, where it wins over the URI's own. */
    static void addTo(DedupProperties properties, String uri, Map<String, String> parameters) {
        Duration timeout = properties.getStore().getTimeout();
        // The in-memory store never waits, and takes no timeout.
        if (timeout != null && !uri.regionMatches(true, 0, "memory:", 0, "memory:".length())) {
            parameters.put("timeout", uriForm(timeout));
        }
    }

    /** The URI parser's own failure for the property's value, said in the property's name. */
    static RuntimeException explained(DedupProperties properties, DedupConfigurationException failure) {
        Duration timeout = properties.getStore().getTimeout();
        if (timeout == null || failure.getMessage() == null
                || !failure.getMessage().startsWith("parameter timeout=" + uriForm(timeout) + " ")) {
            return failure;
        }
        return new DedupConfigurationException(PROPERTY + "=" + timeout + " (the store URI's timeout="
                + uriForm(timeout) + ") does not suit the store: " + failure.getMessage(), failure);
    }

    /** As a URI writes it: 20m, 1500ms; ISO-8601 (which the URI parser takes too) for what those cannot say. */
    private static String uriForm(Duration timeout) {
        long millis = timeout.toMillis();
        if (!Duration.ofMillis(millis).equals(timeout)) {
            return timeout.toString();
        }
        if (millis % 60_000 == 0) {
            return millis / 60_000 + "m";
        }
        return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
    }

    /** {@return how long the health check waits for the store} */
    static Duration healthWait(DedupProperties properties) {
        Duration timeout = properties.getStore().getTimeout();
        return timeout != null ? timeout : DEFAULT_HEALTH_WAIT;
    }
}
