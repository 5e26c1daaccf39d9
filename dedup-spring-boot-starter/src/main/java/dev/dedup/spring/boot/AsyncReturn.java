package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import java.lang.reflect.Method;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import org.springframework.core.ResolvableType;

/**
 * How an {@link Idempotent} method hands over its result: returned, or later through a {@code Mono} or a
 * {@code CompletionStage}, whose value is what is stored and replayed. Other deferred types are refused, each with
 * the type to declare instead.
 */
enum AsyncReturn {
    /** The method returns its result (or is void). */
    NONE,
    /** A Reactor {@code Mono}: at most one value, stored when it arrives. */
    MONO,
    /** A {@code CompletionStage} or {@code CompletableFuture}. */
    COMPLETION_STAGE;

    private static final String MONO_CLASS = "reactor.core.publisher.Mono";

    static AsyncReturn of(Method method) {
        Class<?> returns = method.getReturnType();
        if (returns.getName().equals(MONO_CLASS)) {
            return MONO;
        }
        if (CompletionStage.class.isAssignableFrom(returns)) {
            return COMPLETION_STAGE;
        }
        if (Future.class.isAssignableFrom(returns) || returns.getName().startsWith("reactor.core.publisher.")
                || returns.getName().equals("org.reactivestreams.Publisher")) {
            throw new DedupConfigurationException("@Idempotent " + method.getDeclaringClass().getSimpleName() + "."
                    + method.getName() + " returns " + returns.getSimpleName() + ", which has no single result to"
                    + " store; return a Mono<T> (for a stream, Mono<List<T>> from collectList()), a"
                    + " CompletionStage<T>, or the result itself");
        }
        return NONE;
    }

    /** {@return the type of the value the method's calls produce: what is stored and replayed} */
    ResolvableType valueType(Method method) {
        ResolvableType returns = ResolvableType.forMethodReturnType(method);
        if (this == NONE) {
            return returns;
        }
        ResolvableType value = this == MONO ? returns.getGeneric(0) : returns.as(CompletionStage.class).getGeneric(0);
        if (value.resolve() == null) {
            throw new DedupConfigurationException("@Idempotent " + method.getDeclaringClass().getSimpleName() + "."
                    + method.getName() + " returns " + returns + " without its value type; declare it, as in "
                    + method.getReturnType().getSimpleName() + "<Receipt>");
        }
        return value;
    }
}
