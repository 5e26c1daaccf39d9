package dev.dedup.store.postgres;

import java.util.Optional;

/**
 * What {@link PostgresDedupStore#createSchema()} did. The table, index and purge procedure always exist afterwards;
 * the pg_cron job exists only when {@link #cronScheduled()} is true, and otherwise {@link #cronProblem()} says why
 * and {@link PostgresDedupStore#purgeExpired(int)} must be scheduled by the application.
 *
 * @param table the table, as {@code name} or {@code schema.name}
 * @param cronScheduled true when the pg_cron purge job is scheduled
 * @param cronJobName the pg_cron job's name, {@code dedup-purge:<database>.<table>}, whether or not it is scheduled
 * @param purgeCommand the SQL that purges expired rows, such as {@code CALL dedup_claims_purge(5000, 100)}: what the
 *     job runs, and what to schedule yourself without pg_cron
 * @param cronProblem why the job is not scheduled (pg_cron missing, no permission, ...); empty when it is
 */
public record PostgresSchemaReport(
        String table, boolean cronScheduled, String cronJobName, String purgeCommand, Optional<String> cronProblem) {}
