/**
 * RabbitMQ glue for dedup, on the broker's own Java client ({@code com.rabbitmq:amqp-client}).
 *
 * <p>{@link dev.dedup.rabbitmq.DedupQueues} declares a work queue with its retry queue and dead-letter queue;
 * {@link dev.dedup.rabbitmq.IdempotentDeliverCallback} consumes it with manual acks and settles every delivery by
 * its {@link dev.dedup.ProcessingOutcome}; {@link dev.dedup.rabbitmq.ConfirmedPublisher} publishes with a
 * {@code message-id} and waits for the broker's confirm.
 */
package dev.dedup.rabbitmq;
