package dev.dedup.store.dynamodb;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.util.concurrent.CompletionException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/** Maps SDK failures to dedup's exceptions by type and status, never by message text. */
final class DynamoDbErrors {
    private static final String STORE = "DynamoDB dedup store";

    private DynamoDbErrors() {}

    static DedupException translate(String operation, Throwable failure, String table) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                : failure;
        if (cause instanceof DedupException dedup) {
            return dedup;
        }
        if (cause instanceof ResourceNotFoundException) {
            return new DedupConfigurationException("DynamoDB table " + table + " does not exist; create it with"
                    + " DynamoDbDedupTables.create(client, \"" + table + "\") (key schema: docs/dynamodb.md,"
                    + " \"Table design\")",
                    cause);
        }
        if (cause instanceof SdkClientException) {
            return DedupStoreException.retryable(STORE, operation, cause); // network, timeout: the call may not have run
        }
        if (cause instanceof DynamoDbException service) {
            int status = service.statusCode();
            boolean retryable = status >= 500 || status == 429 || service.isThrottlingException() || service.retryable();
            return retryable ? DedupStoreException.retryable(STORE, operation, cause)
                    : DedupStoreException.permanent(STORE, operation, cause);
        }
        // Anything else the SDK throws (or an unexpected runtime failure) leaves the call's outcome unknown.
        return DedupStoreException.retryable(STORE, operation, cause);
    }
}
