package dev.dedup.spring.boot;

import java.lang.reflect.Method;

/**
 * Told of the {@link Idempotent} calls that did not run their method the ordinary way: a replay of a stored result,
 * and a call without a key that ran without deduplication ({@code required = false}). A bean of this type receives
 * every such call of the application; with Micrometer, the starter's own counts them as {@code dedup.idempotent.calls}.
 * Called on the calling thread (for {@code Mono} and {@code CompletionStage} methods, on the starter's), it must be
 * quick and must not throw.
 */
public interface IdempotentCallListener {

    /**
     * A call returned the result stored by an earlier call under its key; the method did not run.
     *
     * @param method the annotated method
     * @param key the store key of the call
     */
    default void replayed(Method method, String key) {}

    /**
     * A call whose key was null ran its method without deduplication, as {@link Idempotent#required()} allows.
     *
     * @param method the annotated method
     */
    default void ranWithoutKey(Method method) {}
}
