package dev.dedup.spring.boot;

import dev.dedup.MessageHandler;
import dev.dedup.ProcessingOutcome;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import reactor.core.publisher.Mono;

/**
 * Calls of {@link Idempotent} methods that return a {@code Mono} or a {@code CompletionStage}, without blocking the
 * caller's thread, which may be an event loop: the claim, the settlement and the method itself run on dedup's own
 * threads, and the heartbeats on the facade's, while the method's value is awaited. The outcomes are those of a
 * plain method's call, delivered through the returned {@code Mono} or stage.
 */
final class AsyncIdempotentCalls {
    /** At most this many claims and settlements of the stores' blocking calls run at once. */
    private static final int THREADS = 32;

    /** Maps an outcome to what the caller gets, as for a plain method. */
    interface Results {
        Object of(ProcessingOutcome<Object> outcome) throws Throwable;
    }

    private AsyncIdempotentCalls() {}

    /**
     * {@return the call's deferred result, of the method's own return type; a {@code Mono} claims on subscription,
     * a stage at once}
     */
    static Object invoke(IdempotentMethod method, MethodInvocation call,
            MessageHandler<MethodInvocation, Object> proceed, Results results) {
        if (method.async() == AsyncReturn.MONO) {
            return Reactive.deferred(call, method, proceed, results);
        }
        return run(call, method, c -> (CompletionStage<?>) proceed.handle(c), results);
    }

    private static CompletableFuture<Object> run(MethodInvocation call, IdempotentMethod method,
            MessageHandler<MethodInvocation, CompletionStage<?>> work, Results results) {
        return attempt(call, method, work, method.inProgressWait())
                .thenCompose(outcome -> {
                    try {
                        return CompletableFuture.completedFuture(results.of(outcome));
                    } catch (Throwable failure) {
                        return CompletableFuture.failedFuture(failure);
                    }
                });
    }

    /** One claim and, if won, the method; with an in-progress wait, claimed again after each pause (on a timer). */
    private static CompletableFuture<ProcessingOutcome<Object>> attempt(MethodInvocation call, IdempotentMethod method,
            MessageHandler<MethodInvocation, CompletionStage<?>> work, InProgressWait waitForHolder) {
        ExecutorService threads = Threads.POOL;
        return CompletableFuture.supplyAsync(() -> method.consumer.processDeferred(call, c -> {
                    CompletionStage<?> stage = Objects.requireNonNull(work.handle(c),
                            () -> method.describe() + " returned null instead of its Mono or CompletionStage");
                    // The stage may complete on an event loop: the settlement (a blocking store call) waits for one
                    // of dedup's threads instead.
                    return stage.whenCompleteAsync((value, failure) -> {}, threads);
                }), threads)
                .thenCompose(outcome -> outcome)
                .thenCompose(outcome -> {
                    Duration pause = outcome instanceof ProcessingOutcome.InProgressElsewhere
                            ? waitForHolder.nextPause() : null;
                    if (pause == null) {
                        return CompletableFuture.completedFuture(outcome);
                    }
                    Executor later = CompletableFuture.delayedExecutor(pause.toNanos(), TimeUnit.NANOSECONDS, threads);
                    return CompletableFuture.supplyAsync(() -> waitForHolder, later)
                            .thenCompose(sameWait -> attempt(call, method, work, sameWait));
                });
    }

    /** Reactor stays optional: only a method that returns a Mono loads this class. */
    private static final class Reactive {
        /** A cold Mono, as the method's own: each subscription is one call, claimed when it subscribes. */
        static Mono<Object> deferred(MethodInvocation call, IdempotentMethod method,
                MessageHandler<MethodInvocation, Object> proceed, Results results) {
            // Each subscription calls the method again, through the interceptors after this one, as Spring's own
            // reactive interceptors do: a clone of the invocation, since one can be proceeded once.
            return Mono.defer(() -> Mono.fromFuture(run(fresh(call), method,
                    c -> ((Mono<?>) proceed.handle(c)).toFuture(), results)));
        }

        private static MethodInvocation fresh(MethodInvocation call) {
            return call instanceof ProxyMethodInvocation proxied ? proxied.invocableClone() : call;
        }
    }

    /** Daemon threads for the claims, settlements and method calls, created on the first asynchronous call. */
    private static final class Threads {
        static final ExecutorService POOL = create();

        private static ExecutorService create() {
            AtomicInteger count = new AtomicInteger();
            ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), work -> {
                        Thread thread = new Thread(work, "dedup-idempotent-" + count.incrementAndGet());
                        thread.setDaemon(true);
                        return thread;
                    });
            pool.allowCoreThreadTimeOut(true);
            return pool;
        }
    }
}
