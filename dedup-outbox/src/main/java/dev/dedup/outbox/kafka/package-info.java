/**
 * The outbox's Kafka publisher, {@link dev.dedup.outbox.kafka.KafkaOutboxPublisher}. Needs
 * {@code org.apache.kafka:kafka-clients} on the class path (an optional dependency of this module).
 */
package dev.dedup.outbox.kafka;
