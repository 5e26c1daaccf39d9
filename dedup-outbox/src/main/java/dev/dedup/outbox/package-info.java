/**
 * The transactional outbox on PostgreSQL, MySQL 8 and MariaDB 10.6+: {@link dev.dedup.outbox.Outbox#append} writes an event in the caller's
 * business transaction, so it exists exactly when the business change commits; an {@link dev.dedup.outbox.OutboxRelay}
 * publishes the committed events through an {@link dev.dedup.outbox.OutboxPublisher} and marks them published only
 * after the broker confirmed them. Delivery is at least once: every event carries a stable {@code message-id} that
 * consumers deduplicate on (dedup's idempotent consumer and the PostgreSQL inbox do so by default).
 */
package dev.dedup.outbox;
