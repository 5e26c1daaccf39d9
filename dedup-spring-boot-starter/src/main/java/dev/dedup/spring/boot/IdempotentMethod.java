package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupKeys;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ResultCodec;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.ResolvableType;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ExpressionException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * One {@link Idempotent} method, read once: its parsed expressions and the consumer that runs its calls. Every
 * mistake in the annotation fails the method's first call with a message that names the method and the value.
 */
final class IdempotentMethod {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private final Method method;
    private final String scope;
    private final Expression key;
    private final Expression fingerprint;
    private final ResultJson json;
    private final boolean joinsCallersTransaction;
    private final AsyncReturn async;
    private final boolean required;
    private final Duration inProgressWait;
    /** {@link Idempotent#inTransaction()}: the claim and the completion go through the transaction's connection. */
    final boolean inTransaction;
    final IdempotentConsumer<MethodInvocation, Object> consumer;

    IdempotentMethod(Method method, Idempotent annotation, DedupStore store, ResultJson json, Duration lease,
            Duration retention, boolean joinsCallersTransaction) {
        this.method = method;
        this.joinsCallersTransaction = joinsCallersTransaction;
        this.inTransaction = annotation.inTransaction();
        this.json = json;
        this.async = AsyncReturn.of(method);
        this.required = annotation.required();
        this.inProgressWait = duration("inProgressWait", annotation.inProgressWait(), Duration.ZERO);
        if (inProgressWait.isNegative() || inProgressWait.compareTo(InProgressWait.LONGEST) > 0) {
            throw new DedupConfigurationException("@Idempotent inProgressWait '" + annotation.inProgressWait()
                    + "' of " + describe() + " is out of range: 0 to " + InProgressWait.LONGEST.toSeconds() + "s");
        }
        if (inTransaction && async != AsyncReturn.NONE) {
            throw new DedupConfigurationException("@Idempotent(inTransaction = true) " + describe() + " returns "
                    + method.getReturnType().getSimpleName() + ": a thread-bound transaction ends before its value"
                    + " arrives; return the result itself, or drop inTransaction");
        }
        this.scope = annotation.scope().isEmpty() ? defaultScope(method) : annotation.scope();
        this.key = parse("key", annotation.key());
        this.fingerprint = annotation.fingerprint().isEmpty() ? null : parse("fingerprint", annotation.fingerprint());
        Class<? extends Throwable>[] keepKeyOn = annotation.keepKeyOn();
        var builder = IdempotentConsumer.builder(store, this::keyOf, codecFor(method, async, json))
                .lease(duration("lease", annotation.lease(), lease))
                .retention(duration("retention", annotation.retention(), retention))
                .keepKeyOn(failure -> !(failure instanceof TransactionalCompletion.RolledBack)
                        && Arrays.stream(keepKeyOn).anyMatch(type -> type.isInstance(failure)));
        if (fingerprint != null) {
            builder.fingerprint(this::fingerprintOf);
        }
        this.consumer = builder.build();
    }

    private String keyOf(MethodInvocation call) {
        Object value = evaluate(key, call);
        if (value == null) {
            throw new IllegalArgumentException("the @Idempotent key '" + key.getExpressionString() + "' of "
                    + describe() + " is null for this call" + (PARAMETER_NAMES.getParameterNames(method) == null
                            ? "; the class was compiled without parameter names (javac -parameters), so only #p0,"
                                    + " #a0 ... name the arguments" : ""));
        }
        return DedupKeys.fit(scope + ":" + value);
    }

    /**
     * The class's full name, the method and its parameter types: overloads and same-named classes in two packages
     * never share keys.
     */
    private static String defaultScope(Method method) {
        return method.getDeclaringClass().getName() + "." + method.getName() + Arrays.stream(
                method.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(",", "(", ")"));
    }

    /** {@return the call's store key, or null when it has none (the call then fails as it would anyway)} */
    String keyOrNull(MethodInvocation call) {
        try {
            return DedupLimits.checkKey(keyOf(call));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** {@return the annotated method} */
    Method method() {
        return method;
    }

    /** {@return a fresh wait for a call whose key another call holds ({@link Idempotent#inProgressWait()})} */
    InProgressWait inProgressWait() {
        return new InProgressWait(inProgressWait);
    }

    /** {@return whether a call must have a key ({@link Idempotent#required()})} */
    boolean required() {
        return required;
    }

    /** {@return whether the key expression is null for this call} */
    boolean hasNoKey(MethodInvocation call) {
        return evaluate(key, call) == null;
    }

    /** {@return whether the method runs in its caller's transaction, when there is one (no REQUIRES_NEW)} */
    boolean joinsCallersTransaction() {
        return joinsCallersTransaction;
    }

    /** {@return whether a call returns a value to replay (not {@code void}, {@code Mono<Void>} and the like)} */
    boolean returnsValue() {
        Class<?> value = async.valueType(method).resolve(Object.class);
        return value != void.class && value != Void.class;
    }

    /** {@return how the method hands over its result: directly, or as a {@code Mono} or {@code CompletionStage}} */
    AsyncReturn async() {
        return async;
    }

    private byte[] fingerprintOf(MethodInvocation call) {
        Object value = evaluate(fingerprint, call);
        byte[] content;
        if (value instanceof byte[] bytes) {
            content = bytes;
        } else if (value instanceof String text) {
            content = text.getBytes(StandardCharsets.UTF_8);
        } else {
            content = json.write(value);
        }
        try {
            return MessageDigest.getInstance("SHA-256").digest(content);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private Object evaluate(Expression expression, MethodInvocation call) {
        var context = new MethodBasedEvaluationContext(call.getThis(), method, call.getArguments(), PARAMETER_NAMES);
        try {
            return expression.getValue(context);
        } catch (ExpressionException e) {
            throw new IllegalArgumentException("the @Idempotent expression '" + expression.getExpressionString()
                    + "' of " + describe() + " failed: " + e.getMessage(), e);
        }
    }

    private Expression parse(String attribute, String expression) {
        if (expression.isBlank()) {
            throw new DedupConfigurationException("@Idempotent " + attribute + " of " + describe()
                    + " is empty; give a SpEL expression over the arguments, such as #order.id() or #p0");
        }
        try {
            return PARSER.parseExpression(expression);
        } catch (ExpressionException e) {
            throw new DedupConfigurationException("@Idempotent " + attribute + " '" + expression + "' of "
                    + describe() + " is not a valid SpEL expression: " + e.getMessage(), e);
        }
    }

    private Duration duration(String attribute, String value, Duration fallback) {
        if (value.isEmpty()) {
            return fallback;
        }
        try {
            return DurationStyle.detectAndParse(value);
        } catch (IllegalArgumentException e) {
            throw new DedupConfigurationException("@Idempotent " + attribute + " '" + value + "' of " + describe()
                    + " is not a duration; write it as 30s, 5m, 24h, 7d or ISO-8601 PT30S", e);
        }
    }

    private static ResultCodec<Object> codecFor(Method method, AsyncReturn async, ResultJson json) {
        ResolvableType value = async.valueType(method);
        Class<?> returns = value.resolve(Object.class);
        if (returns == void.class || returns == Void.class) {
            return new NoResultCodec();
        }
        if (!ReplayableTypes.canReplay(returns)) {
            throw new DedupConfigurationException("@Idempotent " + describe(method) + " returns "
                    + value + ", which JSON cannot read back as the object that was returned (an"
                    + " interface, an abstract class or Object, without @JsonTypeInfo); declare the concrete type"
                    + " the method returns, or a collection, map or array of such types");
        }
        return new JsonResultCodec(json, value.getType(), returns);
    }

    String describe() {
        return describe(method);
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName();
    }

    /** A void method stores no result; a duplicate returns null. */
    private static final class NoResultCodec implements ResultCodec<Object> {
        @Override
        public byte[] encode(Object result) {
            return null;
        }

        @Override
        public Object decode(byte[] bytes) {
            return null;
        }
    }
}
