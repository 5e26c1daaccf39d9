package dev.dedup.store.redis;

import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/** Maps Lettuce failures to dedup's exceptions by type, never by message text. */
final class RedisErrors {
    private static final String STORE = "Redis dedup store";

    private RedisErrors() {}

    static DedupException translate(String operation, Throwable failure) {
        if (failure instanceof DedupException dedup) {
            return dedup;
        }
        if (failure instanceof TimeoutException || failure instanceof RedisConnectionException
                || failure instanceof CancellationException) {
            return DedupStoreException.retryable(STORE, operation, failure);
        }
        if (failure instanceof RedisCommandExecutionException refused && isPermanent(refused)) {
            return DedupStoreException.permanent(STORE, operation, failure);
        }
        return DedupStoreException.retryable(STORE, operation, failure);
    }

    /**
     * By the Redis error code, the reply's first word: a wrong type or a refused permission stays so; CLUSTERDOWN,
     * TRYAGAIN, LOADING, READONLY and the like pass with a failover. The generic code ERR is permanent only for a
     * command the server does not understand (an older server, a renamed command): a retry gets the same answer.
     */
    static boolean isPermanent(RedisCommandExecutionException refused) {
        String reply = refused.getMessage() == null ? "" : refused.getMessage();
        String code = reply.contains(" ") ? reply.substring(0, reply.indexOf(' ')) : reply;
        return switch (code) {
            case "WRONGTYPE", "NOPERM", "NOAUTH", "WRONGPASS" -> true;
            case "ERR" -> reply.startsWith("ERR syntax error") || reply.startsWith("ERR unknown command")
                    || reply.startsWith("ERR wrong number of arguments") || reply.startsWith("ERR unknown subcommand");
            default -> false;
        };
    }
}
