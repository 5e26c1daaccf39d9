package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.ProcessingOutcome;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Runs each {@link Idempotent} method call through the dedup facade and turns its outcome into what the caller of a
 * plain method expects: a result, a replayed result, or an exception.
 */
final class IdempotentMethodInterceptor implements MethodInterceptor {
    private static final Logger log = LoggerFactory.getLogger(IdempotentMethodInterceptor.class);

    private static final boolean TRANSACTIONS = ClassUtils.isPresent(
            "org.springframework.transaction.support.TransactionSynchronizationManager",
            IdempotentMethodInterceptor.class.getClassLoader());
    /** What {@code inTransaction = true} needs: the transaction's connection, and a SQL store's view of it. */
    private static final boolean JDBC_TRANSACTIONS = TRANSACTIONS
            && ClassUtils.isPresent("org.springframework.jdbc.datasource.DataSourceUtils",
                    IdempotentMethodInterceptor.class.getClassLoader())
            && ClassUtils.isPresent("dev.dedup.jdbc.TransactionalInbox",
                    IdempotentMethodInterceptor.class.getClassLoader());

    private final Supplier<DedupStore> store;
    private final Supplier<ResultJson> json;
    private final Supplier<DedupProperties> properties;
    private final Supplier<IdempotentCallListener> listener;
    private final Map<Method, IdempotentMethod> methods = new ConcurrentHashMap<>();

    /** Takes suppliers: the beans are looked up at a method's first call, not when the advisor is built. */
    IdempotentMethodInterceptor(Supplier<DedupStore> store, Supplier<ResultJson> json,
            Supplier<DedupProperties> properties, Supplier<IdempotentCallListener> listener) {
        this.store = store;
        this.json = json;
        this.properties = properties;
        this.listener = listener;
    }

    @Override
    public Object invoke(MethodInvocation call) throws Throwable {
        IdempotentMethod method = methods.computeIfAbsent(call.getMethod(), m -> read(m, call));
        if (!method.required() && method.hasNoKey(call)) {
            listener.get().ranWithoutKey(method.method());
            IdempotentCalls.record(false);
            return call.proceed();
        }
        if (method.async() != AsyncReturn.NONE) {
            return AsyncIdempotentCalls.invoke(method, call, IdempotentMethodInterceptor::proceed,
                    outcome -> resultOf(method, outcome));
        }
        IdempotentCalls.record(false);
        ProcessingOutcome<Object> outcome;
        if (!method.inTransaction && TRANSACTIONS && method.joinsCallersTransaction()
                && TransactionalCompletion.inTransactionWithoutSynchronization()) {
            throw TransactionalCompletion.unsynchronized(method.describe());
        }
        if (method.inTransaction) {
            outcome = InboxInTransaction.process(method, store.get(), call, IdempotentMethodInterceptor::proceed);
        } else if (TRANSACTIONS && method.joinsCallersTransaction() && TransactionalCompletion.inTransaction()) {
            String key = method.keyOrNull(call);
            TransactionalCompletion.Returned earlier = key == null ? null
                    : TransactionalCompletion.earlierInThisTransaction(key);
            if (earlier != null) {
                IdempotentCalls.record(true);
                listener.get().replayed(method.method(), key);
                return earlier.value();   // this transaction already ran it; its claim waits for the commit
            }
            AtomicReference<Object> returned = new AtomicReference<>();
            CompletableFuture<ProcessingOutcome<Object>> settled = method.consumer.processDeferred(call, c -> {
                returned.set(proceed(c));
                return TransactionalCompletion.afterCommit(returned.get());
            }).toCompletableFuture();
            if (!settled.isDone()) {
                if (key != null) {
                    TransactionalCompletion.remember(key, returned.get());
                }
                return returned.get();   // the method ran; its result is stored when the transaction commits
            }
            outcome = settled.join();
        } else {
            outcome = method.consumer.process(call, IdempotentMethodInterceptor::proceed);
            InProgressWait waitForHolder = method.inProgressWait();
            while (outcome instanceof ProcessingOutcome.InProgressElsewhere && waitForHolder.sleep()) {
                // Another call holds the key: claim again, to replay its result once it has ended (or to run, if
                // it failed and freed the key). The method has not run, so the invocation can still proceed.
                outcome = method.consumer.process(call, IdempotentMethodInterceptor::proceed);
            }
        }
        IdempotentCalls.record(outcome instanceof ProcessingOutcome.AlreadyProcessed);
        return resultOf(method, outcome);
    }

    /** What the caller of a plain method gets for an outcome: the result, the replayed result, or an exception. */
    private Object resultOf(IdempotentMethod method, ProcessingOutcome<Object> outcome) throws Throwable {
        if (outcome instanceof ProcessingOutcome.Processed<Object> processed) {
            return processed.result();
        }
        if (outcome instanceof ProcessingOutcome.AlreadyProcessed<Object> replayed) {
            listener.get().replayed(method.method(), replayed.key());
            if (replayed.result().isEmpty() && method.returnsValue()) {
                throw new IdempotentResultUnavailableException(replayed.key());
            }
            Object result = replayed.result().orElse(null);
            return result == JsonResultCodec.NULL_RESULT ? null : result;
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere<Object> running) {
            throw new IdempotentCallInProgressException(running.key(), running.leaseExpiresAt());
        }
        if (outcome instanceof ProcessingOutcome.AlreadyFailed<Object> failed) {
            throw new IdempotentCallFailedException(failed.key(), failed.error());
        }
        if (outcome instanceof ProcessingOutcome.KeyReused<Object> reused) {
            throw new IdempotencyKeyReusedException(reused.key());
        }
        if (outcome instanceof ProcessingOutcome.LeaseLost<Object> lost) {
            // The method ran and its effect happened; only the record of it is missing, so the caller gets the
            // result, and a retry may run the method again (the facade logged why).
            log.warn("{} ran, but its result could not be stored under key '{}'", method.describe(), lost.key());
            return lost.result();
        }
        throw unwrapped(((ProcessingOutcome.Failed<Object>) outcome).cause());
    }

    private IdempotentMethod read(Method method, MethodInvocation call) {
        // The annotation may sit on the implementation while the proxy was called through an interface.
        Method target = call.getThis() == null ? method
                : AopUtils.getMostSpecificMethod(method, AopUtils.getTargetClass(call.getThis()));
        Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(target, Idempotent.class);
        DedupProperties settings = properties.get();
        boolean joinsCallersTransaction = !TRANSACTIONS || call.getThis() == null
                || !TransactionalCompletion.leavesCallersTransaction(target, AopUtils.getTargetClass(call.getThis()));
        IdempotentMethod read = new IdempotentMethod(target, annotation, store.get(), json.get(), settings.getLease(),
                settings.getRetention(), joinsCallersTransaction);
        if (read.inTransaction) {
            if (!JDBC_TRANSACTIONS) {
                throw new DedupConfigurationException(read.describe() + " is @Idempotent(inTransaction = true), which"
                        + " needs spring-jdbc (spring-boot-starter-jdbc or spring-boot-starter-data-jpa) and a SQL"
                        + " store (dedup-store-postgres or dedup-store-mysql) on the class path");
            }
            InboxInTransaction.inboxOf(read.describe(), store.get());   // refuses a store that cannot join
        }
        return read;
    }

    /** The method itself, seen as a handler: checked exceptions pass through the facade as they are. */
    private static Object proceed(MethodInvocation call) throws Exception {
        try {
            return call.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable other) {
            throw new UndeclaredThrowableException(other);
        }
    }

    private static Throwable unwrapped(Throwable failure) {
        return failure instanceof UndeclaredThrowableException undeclared && undeclared.getCause() != null
                ? undeclared.getCause() : failure;
    }
}
