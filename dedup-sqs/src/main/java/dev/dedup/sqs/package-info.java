/**
 * Amazon SQS glue on the AWS SDK for Java v2: {@link dev.dedup.sqs.SqsMessageProcessor}, a receive loop that
 * deletes, retries or dead-letters each message by its outcome, and {@link dev.dedup.sqs.SqsBatchHandler}, the same
 * rules for a Lambda-style batch that answers with the batch item failures.
 */
package dev.dedup.sqs;
