package dev.dedup.outbox;

import java.util.Optional;

/**
 * What {@link Outbox#createSchema()} set up.
 *
 * @param table the outbox table, as named
 * @param purgeScheduled whether the purge of published events runs on its own: a pg_cron job on PostgreSQL, an
 *     {@code EVENT} that the event scheduler runs on MySQL and MariaDB
 * @param jobName the pg_cron job's name, {@code dedup-outbox-purge:<database>.<table>}; on MySQL and MariaDB the
 *     event's, {@code <table>_purge_event}
 * @param purgeCommand the SQL the job or event runs; schedule it yourself when {@code purgeScheduled} is false
 * @param problem why the job is not scheduled, when it is not
 */
public record OutboxSchemaReport(String table, boolean purgeScheduled, String jobName, String purgeCommand,
        Optional<String> problem) {}
