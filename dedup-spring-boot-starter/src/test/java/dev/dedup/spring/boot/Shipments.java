package dev.dedup.spring.boot;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the listener tests' {@link Idempotent} listener methods do: count one effect per message body, and fail the
 * first run of a body that starts with {@code fail-once}, so the container's redelivery runs it again.
 */
class Shipments {
    private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    void ship(String body) {
        int run = runs.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
        if (body.startsWith("fail-once") && run == 1) {
            throw new IllegalStateException("the first run of " + body + " fails");
        }
        effects.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
    }

    int effects(String body) {
        AtomicInteger count = effects.get(body);
        return count == null ? 0 : count.get();
    }

    int runs(String body) {
        AtomicInteger count = runs.get(body);
        return count == null ? 0 : count.get();
    }
}
