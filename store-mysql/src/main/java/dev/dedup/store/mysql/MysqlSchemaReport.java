package dev.dedup.store.mysql;

import java.util.Optional;

/**
 * What {@link MysqlDedupStore#createSchema()} did. The table and the purge procedure always exist afterwards; the
 * purge event exists when {@link #eventCreated()} is true and runs only while the server's event scheduler is on
 * and the event is enabled. When any of these is not so, {@link #eventProblem()} says why, and
 * {@link #purgeCommand()} (or {@link MysqlDedupStore#purgeExpired(int)}) must be scheduled by the application.
 *
 * @param table the table, as {@code name} or {@code database.name}
 * @param eventCreated true when the purge event exists
 * @param eventName the event's name, {@code <table>_purge_event}, in the table's database
 * @param purgeCommand the SQL that purges expired rows, such as {@code CALL `dedup_claims_purge`(5000, 100)}: what the
 *     event runs, and what to schedule yourself without it
 * @param eventProblem why the purge will not run on its own (the event scheduler is off, the event could not be
 *     created, or it is DISABLED or SLAVESIDE_DISABLED); empty when the event is enabled and the scheduler is on
 */
public record MysqlSchemaReport(
        String table, boolean eventCreated, String eventName, String purgeCommand, Optional<String> eventProblem) {}
