package dev.dedup.sqs;

import java.util.List;
import java.util.Objects;

/**
 * The partial batch response of a function with {@code ReportBatchItemFailures}, in the shape of the Lambda runtime's
 * {@code SQSBatchResponse}: the messages named here come back after their visibility timeout, every other message of
 * the batch is deleted. A JSON mapper writes it as {@code {"batchItemFailures":[{"itemIdentifier":"..."}]}}.
 *
 * @param batchItemFailures the messages that must come again (or go on to the redrive policy), in the batch's order
 */
public record SqsBatchResponse(List<BatchItemFailure> batchItemFailures) {

    /**
     * Copies the failures.
     *
     * @param batchItemFailures the messages that must come again
     */
    public SqsBatchResponse {
        batchItemFailures = List.copyOf(Objects.requireNonNull(batchItemFailures, "batchItemFailures"));
    }

    /**
     * One message that is not to be deleted.
     *
     * @param itemIdentifier its {@code MessageId}
     */
    public record BatchItemFailure(String itemIdentifier) {

        /**
         * Checks the identifier.
         *
         * @param itemIdentifier its {@code MessageId}
         */
        public BatchItemFailure {
            Objects.requireNonNull(itemIdentifier, "itemIdentifier");
        }
    }
}
