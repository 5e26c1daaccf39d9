package dev.dedup.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated bean method at most once per key while the key's record lives, on the application's
 * {@code DedupStore}: a repeated call returns the first call's result (stored as JSON), without running the method.
 * Works on any Spring bean method, {@code @KafkaListener} and {@code @RabbitListener} methods included:
 *
 * <pre>{@code
 * @Idempotent(key = "#order.id()")
 * public Receipt charge(Order order) { ... }
 * }</pre>
 *
 * <p>What a call sees, by the key's state:
 * <ul>
 *   <li>new, or released by a failed call: the method runs; its result is stored for {@link #retention()};</li>
 *   <li>completed: the stored result, decoded to the method's return type (null for {@code void});</li>
 *   <li>another call still running under it: {@link IdempotentCallInProgressException};</li>
 *   <li>stored as failed (an exception listed in {@link #keepKeyOn()}): {@link IdempotentCallFailedException};</li>
 *   <li>used by a call with another {@link #fingerprint()}: {@link IdempotencyKeyReusedException};</li>
 *   <li>completed, but without a stored result (too large, not encodable, or a subclass of the declared type):
 *       {@link IdempotentResultUnavailableException}, never a silent null.</li>
 * </ul>
 * An exception from the method releases the key, so a retry runs it again, and is rethrown as it was. A store that
 * cannot be reached throws its {@code DedupStoreException}; the method does not run. Called inside a running
 * transaction (with Spring's transaction synchronization), the result is stored after the commit and a rollback
 * releases the key.
 *
 * <p>The method is called through a Spring proxy, so a call from another method of the same bean is not
 * intercepted. A method returning a {@code Mono<T>} or a {@code CompletionStage<T>} stores and replays the value
 * when it arrives, and delivers the outcomes above as an error signal or an exceptional completion; its claim, its
 * settlement and the method itself run on the starter's threads, never on the caller's event loop, and a {@code Mono}
 * claims when it is subscribed. Other deferred types ({@code Flux}, other publishers, a plain {@code Future}) are
 * refused when the method is first called; so are declared return types that JSON cannot read back as what was
 * returned ({@code Object}, interfaces and abstract classes without {@code @JsonTypeInfo}; collections, maps, arrays
 * and {@code Optional} are fine).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {
    /**
     * The key, a SpEL expression over the method's arguments: by name ({@code #order.id()}, with the compiler's
     * {@code -parameters}, which Spring Boot's build plugins set), or by position ({@code #p0}, {@code #a0}). Its
     * value's {@code toString()} is the key, within the {@link #scope()}; a null value fails the call.
     *
     * @return the key expression
     */
    String key();

    /**
     * Names the keys' space, so two methods with the same key values do not share records (default: the declaring
     * class's full name, the method name and its parameter types' simple names,
     * {@code com.example.OrderService.charge(Order)}); set it to keep the keys stable across a rename, or to make
     * two methods share keys.
     *
     * @return the scope, or empty for the default
     */
    String scope() default "";

    /**
     * What identifies the request's content, a SpEL expression like {@link #key()} (default: none): its value's
     * SHA-256 (of the bytes of a {@code byte[]}, the UTF-8 of a {@code String}, else of its JSON) is stored with the
     * claim, and a later call under the same key with another fingerprint throws
     * {@link IdempotencyKeyReusedException} instead of replaying a result that belongs to another request.
     *
     * @return the fingerprint expression, or empty for none
     */
    String fingerprint() default "";

    /**
     * How long a claim holds before another call may take the key over, renewed by heartbeats while the method
     * runs, as {@code 30s}, {@code 5m} or ISO-8601 {@code PT30S} (default: {@code dedup.lease}).
     *
     * @return the lease, or empty for the default
     */
    String lease() default "";

    /**
     * How long a call whose key another call holds waits for that call to end, as {@code 2s} or ISO-8601, at most
     * 60 s (default: no wait). It then gets that call's stored result (or runs, if that call failed and freed the
     * key); after the wait it throws {@link IdempotentCallInProgressException} as without one. The wait blocks the
     * calling thread, in growing pauses, except on a {@code Mono} or {@code CompletionStage} method, whose wait is
     * on a timer. Not inside a transaction: a call there is answered at once, as its claim is.
     *
     * @return the wait, or empty for none
     */
    String inProgressWait() default "";

    /**
     * How long a completed key and its result are kept, as {@code 24h}, {@code 7d} or ISO-8601 (default:
     * {@code dedup.retention}).
     *
     * @return the retention, or empty for the default
     */
    String retention() default "";

    /**
     * Exceptions retrying cannot fix: when the method throws one of these (or a subclass), the key is stored as
     * failed with the exception's message, and later calls throw {@link IdempotentCallFailedException} without
     * running the method (default: none, every exception releases the key).
     *
     * @return the exception types that keep the key
     */
    Class<? extends Throwable>[] keepKeyOn() default {};

    /**
     * Whether the call joins the surrounding transaction as its inbox (default false: the result is stored after
     * the commit, as described above). With true, the claim, the method's writes and the stored result go through
     * the transaction's own connection and commit together, or roll back together, which frees the key: a crash
     * before the commit can neither lose the effect nor run it twice. Needs an active read-write Spring transaction
     * (the method's own {@code @Transactional}, or its caller's) under {@code DataSourceTransactionManager} or
     * {@code JpaTransactionManager}, on the {@code DataSource} a SQL store (PostgreSQL, MySQL/MariaDB) was built on;
     * a call without one throws {@link IdempotentTransactionRequiredException}, and a store that cannot join it
     * (another kind, another {@code DataSource}, a pool of its own from {@code dedup.store.uri}) fails the first call
     * with a {@code DedupConfigurationException}. The interception runs inside the transaction's, whatever the
     * order of the annotations. A failure kept by {@link #keepKeyOn()} is written in the transaction too, so it
     * stays only if the transaction commits.
     *
     * @return true to run the claim and the completion in the surrounding transaction
     */
    boolean inTransaction() default false;

    /**
     * Whether every call must have a key (default true: a null key fails the call with an
     * {@code IllegalArgumentException}, and the method does not run). With false, a call whose {@link #key()} is null
     * runs the method without deduplication, as an API whose callers opt in per request; each such call is counted
     * ({@code dedup.idempotent.calls{outcome=without-key}} with Micrometer) and told to the
     * {@link IdempotentCallListener}.
     *
     * @return false to run calls without a key unprotected
     */
    boolean required() default true;
}
