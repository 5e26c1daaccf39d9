package dev.dedup.store.dynamodb;

import java.util.Optional;

/**
 * What {@link DynamoDbDedupTables#create} did: the table exists afterwards; TTL deletion is on only when
 * {@link #ttlEnabled()}, and otherwise {@link #ttlProblem()} says why. Correctness never depends on it: claims compare
 * expiry themselves, TTL only removes old items (and can lag by days).
 *
 * @param table the table's name
 * @param created true when this call created the table, false when it existed already
 * @param ttlEnabled true when TTL deletion is on for attribute {@code ttl_epoch_s}
 * @param ttlProblem why TTL deletion could not be enabled, and what to do; empty when it is on
 */
public record DynamoDbTableReport(String table, boolean created, boolean ttlEnabled, Optional<String> ttlProblem) {}
