package dev.dedup.store.redis;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import dev.dedup.DedupStoreException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One script call without a blocked thread: {@link RedisCalls#run}'s rules (NOSCRIPT sends the source, a lost reply
 * is resent flagged until the deadline, a command the client refused fails at once, failures map through
 * {@link RedisErrors}), driven by Lettuce's replies. The deadline and the pause before a resend run on the client's
 * own timer ({@link io.lettuce.core.resource.ClientResources#timer()}), so they fire to its tick; no other thread is
 * involved. That timer stops with the client's resources: a resend or deadline it can no longer schedule fails the
 * call, and closing the store fails the calls still waiting on it ({@link RedisPendingCalls}).
 */
final class RedisAsyncCall<T> {
    private final CompletableFuture<T> result = new CompletableFuture<>();
    private final RedisCalls calls;
    private final RedisClusterAsyncCommands<String, byte[]> commands;
    private final RedisScripts.Script script;
    private final ScriptOutputType type;
    private final String[] keys;
    private final RedisCalls.Arguments arguments;
    private final String operation;
    private final long deadline;
    private final Timer timer;
    private volatile RedisFuture<T> inFlight;

    private RedisAsyncCall(RedisCalls calls, RedisClusterAsyncCommands<String, byte[]> commands,
            RedisScripts.Script script, ScriptOutputType type, String[] keys, RedisCalls.Arguments arguments,
            String operation, long deadline, Timer timer) {
        this.calls = calls;
        this.commands = commands;
        this.script = script;
        this.type = type;
        this.keys = keys;
        this.arguments = arguments;
        this.operation = operation;
        this.deadline = deadline;
        this.timer = timer;
    }

    /** Sends {@code script} on {@code key} now; the future completes with its reply or a dedup exception. */
    static <T> CompletableFuture<T> start(RedisCalls calls, RedisClusterAsyncCommands<String, byte[]> commands,
            RedisScripts.Script script, ScriptOutputType type, String key, RedisCalls.Arguments arguments,
            String operation, Timer timer) {
        return start(calls, commands, script, type, new String[] {key}, arguments, operation, calls.deadline(),
                timer);
    }

    /**
     * Sends {@code script} on {@code keys} (of one slot, on a Cluster) now, to be answered by {@code deadline} (a
     * {@link System#nanoTime()} value): a batch's parts share the batch's deadline.
     */
    static <T> CompletableFuture<T> start(RedisCalls calls, RedisClusterAsyncCommands<String, byte[]> commands,
            RedisScripts.Script script, ScriptOutputType type, String[] keys, RedisCalls.Arguments arguments,
            String operation, long deadline, Timer timer) {
        RedisAsyncCall<T> call = new RedisAsyncCall<>(calls, commands, script, type, keys, arguments, operation,
                deadline, timer);
        calls.pending().track(call.result);
        within(call.result, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), timer, call::expire);
        call.attempt(false, false);
        return call.result;
    }

    /**
     * Runs {@code onExpiry} unless {@code future} completes within {@code timeout}, on the client's timer; a timer
     * the client has already stopped (its resources shut down) fails the future at once.
     */
    static void within(CompletableFuture<?> future, Duration timeout, Timer timer, Runnable onExpiry) {
        Timeout expiry;
        try {
            expiry = timer.newTimeout(ignored -> onExpiry.run(), timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            future.completeExceptionally(timerStopped(e));
            return;
        }
        future.whenComplete((value, failure) -> expiry.cancel());
    }

    private void attempt(boolean withSource, boolean resend) {
        if (result.isDone()) {
            return; // the deadline passed during the pause
        }
        RedisFuture<T> future;
        try {
            future = calls.send(commands, script, type, keys, arguments.of(resend), withSource);
        } catch (RuntimeException e) {
            result.completeExceptionally(RedisErrors.translate(operation, e));
            return;
        }
        inFlight = future;
        boolean doneAtOnce = future.isDone();
        future.whenComplete((value, failure) -> {
            if (failure == null) {
                result.complete(value);
            } else {
                retryOrFail(failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure, doneAtOnce, withSource, resend);
            }
        });
    }

    /** The blocking loop's decision, for one failed attempt. */
    private void retryOrFail(Throwable cause, boolean doneAtOnce, boolean withSource, boolean resend) {
        // Failed before send returned, and not by an I/O error: the client refused it, it was never written.
        boolean refusedAtOnce = doneAtOnce && !(cause instanceof IOException);
        if (cause instanceof RedisNoScriptException && !withSource) {
            attempt(true, resend); // not run: the server has not cached the script yet
        } else if (RedisCalls.isConnectionLoss(cause) && (resend || !refusedAtOnce)
                && deadline - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(2 * RedisCalls.RESEND_PAUSE_MILLIS)) {
            try {
                timer.newTimeout(ignored -> attempt(withSource, true), RedisCalls.RESEND_PAUSE_MILLIS,
                        TimeUnit.MILLISECONDS);
            } catch (RuntimeException e) { // the client's resources shut down: no resend would ever run
                result.completeExceptionally(timerStopped(e));
            }
        } else {
            result.completeExceptionally(RedisErrors.translate(operation, cause));
        }
    }

    /** The failure of a call whose resend or deadline the client's stopped timer refused. */
    private static DedupStoreException timerStopped(RuntimeException refusal) {
        return DedupStoreException.retryable("Redis dedup store", "call (the client's timer is stopped)", refusal);
    }

    private void expire() {
        if (result.completeExceptionally(RedisErrors.translate(operation,
                new TimeoutException("no reply within " + calls.timeout())))) {
            RedisFuture<T> future = inFlight;
            if (future != null) {
                future.cancel(true); // do not leave it queued while the server is away
            }
        }
    }
}
