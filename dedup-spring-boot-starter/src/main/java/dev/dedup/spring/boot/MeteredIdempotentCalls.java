package dev.dedup.spring.boot;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.reflect.Method;
import java.util.Objects;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Counts the {@link Idempotent} calls that did not run the ordinary way, as {@code dedup.idempotent.calls} tagged
 * {@code outcome=replayed} or {@code outcome=without-key} and {@code method} (the simple class name and the method's).
 */
public class MeteredIdempotentCalls implements IdempotentCallListener {
    /** The counter's name. */
    public static final String METER = "dedup.idempotent.calls";

    private final ObjectProvider<MeterRegistry> registry;

    /**
     * Creates the listener.
     *
     * @param registry the application's registry, looked up at each count; without one, nothing is counted
     */
    public MeteredIdempotentCalls(ObjectProvider<MeterRegistry> registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void replayed(Method method, String key) {
        count(method, "replayed");
    }

    @Override
    public void ranWithoutKey(Method method) {
        count(method, "without-key");
    }

    private void count(Method method, String outcome) {
        MeterRegistry meters = registry.getIfUnique();
        if (meters == null) {
            return;
        }
        Counter.builder(METER)
                .description("@Idempotent calls that replayed a stored result, or ran without a key")
                .tag("outcome", outcome)
                .tag("method", method.getDeclaringClass().getSimpleName() + "." + method.getName())
                .register(meters)
                .increment();
    }
}
