package dev.dedup.store.mongo;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientException;
import com.mongodb.MongoConnectionPoolClearedException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoIncompatibleDriverException;
import com.mongodb.MongoInterruptedException;
import com.mongodb.MongoNodeIsRecoveringException;
import com.mongodb.MongoNotPrimaryException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoServerUnavailableException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoStalePrimaryException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.util.Set;

/**
 * Maps driver failures to dedup's exceptions by exception type, error label and server error code, never by
 * message text. Retryable: whatever passes with time or a failover (network, timeouts, elections, write conflicts);
 * permanent: what a retry cannot fix (authentication, authorization, validation, a closed client).
 */
final class MongoErrors {
    static final String STORE = "MongoDB dedup store";

    /**
     * Server codes that pass with time: the retryable-writes specification's list (HostUnreachable 6,
     * HostNotFound 7, NetworkTimeout 89, ShutdownInProgress 91, PrimarySteppedDown 189, ExceededTimeLimit 262,
     * SocketException 9001, NotWritablePrimary 10107, InterruptedAtShutdown 11600, InterruptedDueToReplStateChange
     * 11602, NotPrimaryNoSecondaryOk 13435, NotPrimaryOrSecondary 13436), plus MaxTimeMSExpired 50,
     * WriteConcernFailed 64, WriteConflict 112, ConflictingOperationInProgress 117,
     * FailedToSatisfyReadPreference 133, ReadConcernMajorityNotAvailableYet 134,
     * NetworkInterfaceExceededTimeLimit 202, LockTimeout 24, and the request-rate limits of hosted services
     * (16500 on Cosmos DB, 462 ingress limit).
     */
    private static final Set<Integer> TRANSIENT_CODES = Set.of(6, 7, 24, 50, 64, 89, 91, 112, 117, 133, 134, 189, 202,
            262, 462, 9001, 10107, 11600, 11602, 13435, 13436, 16500);

    /**
     * Labels a server puts on errors that pass with time (its overload signals). Named here, not through the
     * driver's constants: those arrived after 5.8, and the server sends the label whatever the driver's version.
     */
    static final String RETRYABLE_ERROR_LABEL = "RetryableError";
    static final String SYSTEM_OVERLOADED_ERROR_LABEL = "SystemOverloadedError";

    private MongoErrors() {}

    static DedupException translate(String operation, RuntimeException failure) {
        if (failure instanceof DedupException dedup) {
            return dedup;
        }
        if (failure instanceof MongoException mongo && isRetryable(mongo)) {
            return DedupStoreException.retryable(STORE, operation, failure);
        }
        // Anything else, including IllegalStateException from a MongoClient the application has closed.
        return DedupStoreException.permanent(STORE, operation, failure);
    }

    static boolean isRetryable(MongoException e) {
        if (e.hasErrorLabel(RETRYABLE_ERROR_LABEL)
                || e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)
                || e.hasErrorLabel(SYSTEM_OVERLOADED_ERROR_LABEL)) {
            return true;
        }
        if (e instanceof MongoSocketException // refused, reset, read and write timeouts
                || e instanceof MongoTimeoutException // server selection, pool wait, the operation's timeout
                || e instanceof MongoExecutionTimeoutException
                || e instanceof MongoConnectionPoolClearedException
                || e instanceof MongoServerUnavailableException
                || e instanceof MongoInterruptedException
                || e instanceof MongoNotPrimaryException
                || e instanceof MongoNodeIsRecoveringException
                || e instanceof MongoStalePrimaryException
                || e instanceof MongoWriteConcernException) {
            return true;
        }
        if (e instanceof MongoBulkWriteException bulk) {
            if (bulk.getWriteConcernError() != null) {
                return true;
            }
            for (BulkWriteError error : bulk.getWriteErrors()) {
                if (!TRANSIENT_CODES.contains(error.getCode())) {
                    return false;
                }
            }
            return !bulk.getWriteErrors().isEmpty();
        }
        if (e instanceof MongoWriteException write) {
            return TRANSIENT_CODES.contains(write.getError().getCode());
        }
        if (e instanceof MongoServerException) {
            return TRANSIENT_CODES.contains(e.getCode());
        }
        if (e instanceof MongoIncompatibleDriverException) {
            return false;
        }
        if (e.getCause() instanceof MongoSocketException || e.getCause() instanceof MongoTimeoutException) {
            return true; // for example authentication cut short by the network: not a refused credential
        }
        // MongoSecurityException (credentials refused), MongoConfigurationException: retrying cannot help.
        return !(e instanceof MongoClientException);
    }
}
