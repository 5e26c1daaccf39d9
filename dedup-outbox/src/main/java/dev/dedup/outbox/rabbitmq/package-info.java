/**
 * The outbox's RabbitMQ publisher, {@link dev.dedup.outbox.rabbitmq.RabbitOutboxPublisher}, on
 * {@code dedup-rabbitmq}'s {@link dev.dedup.rabbitmq.ConfirmedPublisher}. Needs {@code dev.dedup:dedup-rabbitmq} on
 * the class path (an optional dependency of this module).
 */
package dev.dedup.outbox.rabbitmq;
