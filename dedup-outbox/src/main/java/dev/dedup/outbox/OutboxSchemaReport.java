package dev.dedup.outbox;

import java.util.Optional;

/**
 * What {@link Outbox#createSchema()} set up.
 *
 * @param table the outbox table, as named
 * @param purgeScheduled whether pg_cron runs the purge of published events
 * @param jobName the pg_cron job's name, {@code dedup-outbox-purge:<database>.<table>}
 * @param purgeCommand the SQL the job runs; schedule it yourself when {@code purgeScheduled} is false
 * @param problem why the job is not scheduled, when it is not
 */
public record OutboxSchemaReport(String table, boolean purgeScheduled, String jobName, String purgeCommand,
        Optional<String> problem) {}
