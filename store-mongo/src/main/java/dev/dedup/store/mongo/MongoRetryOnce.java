package dev.dedup.store.mongo;

import com.mongodb.MongoConnectionPoolClearedException;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.client.MongoCollection;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;

/**
 * Runs one store operation, and once more when its connection broke under it: the reply may have been lost after
 * the server applied the write. The driver's retryable writes do this on a replica set; on a standalone server, and
 * on servers without sessions (mongo-java-server), nothing does, so the store does it itself. Every operation is
 * written to be safe to run twice: a claim recognises its own owner token, and a retried complete, fail, extend or
 * release recognises the state it asked for under its owner ({@code retried} tells it to look). The second try gets
 * only the time the first one left, so the call as a whole stays within the store's timeout.
 */
final class MongoRetryOnce {
    /** One try of the operation, on {@code collection}; {@code retried} is true on the second. */
    interface Attempt<T> {
        T run(MongoCollection<BsonDocument> collection, boolean retried);
    }

    /** The label a server puts on a write error that the retryable-writes specification says to retry. */
    private static final String RETRYABLE_WRITE_ERROR = "RetryableWriteError";

    private MongoRetryOnce() {}

    static <T> T run(MongoCollection<BsonDocument> collection, long deadlineNanos, Attempt<T> attempt) {
        try {
            return attempt.run(collection, false);
        } catch (MongoException e) {
            long remainingMillis = secondTryMillis(e, deadlineNanos);
            if (remainingMillis < 1) {
                throw e;
            }
            try {
                return attempt.run(collection.withTimeout(remainingMillis, TimeUnit.MILLISECONDS), true);
            } catch (RuntimeException second) {
                second.addSuppressed(e);
                throw second;
            }
        }
    }

    /**
     * The time the second try gets after {@code failure}: what the first left before the deadline, or 0 when there
     * is to be no second try (the failure is no broken connection). The non-blocking path's rule too.
     */
    static long secondTryMillis(Throwable failure, long deadlineNanos) {
        if (!(failure instanceof MongoException mongo) || !brokenConnection(mongo)) {
            return 0;
        }
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
    }

    /**
     * A connection that failed while the request may have been in flight, or a server error the retryable-writes
     * specification marks as safe to retry. Timeouts are not retried: they have used up the call's time.
     */
    static boolean brokenConnection(MongoException e) {
        return e instanceof MongoSocketException && !(e instanceof MongoSocketReadTimeoutException)
                || e instanceof MongoConnectionPoolClearedException
                || e.hasErrorLabel(RETRYABLE_WRITE_ERROR);
    }
}
