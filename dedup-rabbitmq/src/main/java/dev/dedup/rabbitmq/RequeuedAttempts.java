package dev.dedup.rabbitmq;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The failed attempts of deliveries requeued by a nack, which cannot carry the attempt header a parked copy carries:
 * kept by key until the delivery comes back to the same callback. Bounded: the oldest keys are forgotten first.
 */
final class RequeuedAttempts {
    private static final int MAX_KEYS = 10_000;

    private final Map<String, Integer> byKey = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > MAX_KEYS;
        }
    };

    synchronized void remember(String key, int attempts) {
        byKey.put(key, attempts);
    }

    /** The attempts remembered for {@code key}, forgotten now; 0 when none. */
    synchronized int take(String key) {
        Integer attempts = key == null ? null : byKey.remove(key);
        return attempts == null ? 0 : attempts;
    }
}
