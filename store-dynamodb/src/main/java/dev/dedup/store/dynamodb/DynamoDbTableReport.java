package dev.dedup.store.dynamodb;

import java.util.Optional;

/**
 * What {@link DynamoDbDedupTables#create} did: the table exists afterwards; TTL deletion is on only when
 * {@link #ttlEnabled()}, and otherwise {@link #ttlProblem()} says why. Correctness never depends on it: claims compare
 * expiry themselves, TTL only removes old items (and can lag by days).
 */
public record DynamoDbTableReport(String table, boolean created, boolean ttlEnabled, Optional<String> ttlProblem) {}
