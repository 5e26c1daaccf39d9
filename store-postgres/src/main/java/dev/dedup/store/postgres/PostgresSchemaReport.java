package dev.dedup.store.postgres;

import java.util.Optional;

/**
 * What {@link PostgresDedupStore#createSchema()} did. The table, index and purge procedure always exist afterwards;
 * the pg_cron job exists only when {@link #cronScheduled()} is true, and otherwise {@link #cronProblem()} says why
 * and {@link PostgresDedupStore#purgeExpired(int)} must be scheduled by the application.
 */
public record PostgresSchemaReport(
        String table, boolean cronScheduled, String cronJobName, String purgeCommand, Optional<String> cronProblem) {}
