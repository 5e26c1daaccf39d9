package dev.dedup.store.redis;

import dev.dedup.DedupStoreException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the store's scripts within one timeout per call. A script whose connection dropped after it was sent may
 * have run with its reply lost: it is sent again, flagged as a resend, until the timeout, and the scripts recognise
 * their own owner's earlier outcome. A script refused before it was sent (the client knows it is disconnected)
 * fails at once, so an outage never makes calls wait.
 */
final class RedisCalls {
    static final long RESEND_PAUSE_MILLIS = 20;

    private final Duration timeout;
    private final RedisPendingCalls pending = new RedisPendingCalls();

    RedisCalls(Duration timeout) {
        this.timeout = timeout;
    }

    /** The async calls in flight, which the store fails when it closes. */
    RedisPendingCalls pending() {
        return pending;
    }

    Duration timeout() {
        return timeout;
    }

    /** The deadline of a call that starts now, in {@link System#nanoTime()} terms. */
    long deadline() {
        return System.nanoTime() + timeout.toNanos();
    }

    /** Arguments of one attempt; {@code resend} is true when an earlier attempt may have run. */
    @FunctionalInterface
    interface Arguments {
        byte[][] of(boolean resend);
    }

    /** Runs {@code script} on {@code key}, resending it (flagged) after a lost reply until {@code deadline}. */
    <T> T run(RedisClusterAsyncCommands<String, byte[]> commands, RedisScripts.Script script, ScriptOutputType type,
            String key, Arguments arguments, String operation, long deadline, boolean resend) {
        boolean withSource = false;
        while (true) {
            RedisFuture<T> future = send(commands, script, type, key, arguments.of(resend), withSource);
            boolean doneAtOnce = future.isDone();
            try {
                return await(future, deadline);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                // Failed before send returned, and not by an I/O error: the client refused it, it was never written.
                boolean refusedAtOnce = doneAtOnce && !(cause instanceof IOException);
                if (cause instanceof RedisNoScriptException && !withSource) {
                    withSource = true; // not run: the server has not cached the script yet
                } else if (isConnectionLoss(cause) && (resend || !refusedAtOnce) && pause(deadline)) {
                    resend = true;
                } else {
                    throw RedisErrors.translate(operation, cause);
                }
            } catch (TimeoutException e) {
                throw RedisErrors.translate(operation, e);
            }
        }
    }

    /** Sends one attempt without waiting: by hash, or in full once the server answered NOSCRIPT. */
    <T> RedisFuture<T> send(RedisClusterAsyncCommands<String, byte[]> commands, RedisScripts.Script script,
            ScriptOutputType type, String key, byte[][] arguments, boolean withSource) {
        return send(commands, script, type, new String[] {key}, arguments, withSource);
    }

    /** As the one-key send, for a script on several keys (of one slot, on a Cluster). */
    <T> RedisFuture<T> send(RedisClusterAsyncCommands<String, byte[]> commands, RedisScripts.Script script,
            ScriptOutputType type, String[] keys, byte[][] arguments, boolean withSource) {
        return withSource ? commands.eval(script.source(), type, keys, arguments)
                : commands.evalsha(script.sha(), type, keys, arguments);
    }

    /** Waits for {@code future} until {@code deadline}, mapping failures to dedup's exceptions. */
    <T> T await(RedisFuture<T> future, long deadline, String operation) {
        try {
            return await(future, deadline);
        } catch (ExecutionException e) {
            throw RedisErrors.translate(operation, e.getCause());
        } catch (TimeoutException e) {
            throw RedisErrors.translate(operation, e);
        }
    }

    <T> T await(RedisFuture<T> future, long deadline) throws ExecutionException, TimeoutException {
        try {
            return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            future.cancel(true); // do not leave it queued while the server is away
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(true);
            throw new DedupStoreException("Redis dedup store call interrupted", e, true);
        }
    }

    /**
     * A failure of the connection, not a reply of the server: the command may or may not have run. Server replies,
     * Lettuce's own timeout and interruption are not.
     */
    static boolean isConnectionLoss(Throwable cause) {
        if (cause instanceof RedisCommandExecutionException || cause instanceof RedisCommandTimeoutException
                || cause instanceof RedisCommandInterruptedException) {
            return false;
        }
        return cause instanceof RedisException || cause instanceof IOException;
    }

    /** Sleeps briefly before a resend; false when the deadline leaves no time for one. */
    private static boolean pause(long deadline) {
        if (deadline - System.nanoTime() <= TimeUnit.MILLISECONDS.toNanos(2 * RESEND_PAUSE_MILLIS)) {
            return false;
        }
        try {
            Thread.sleep(RESEND_PAUSE_MILLIS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DedupStoreException("Redis dedup store call interrupted", e, true);
        }
    }
}
