package dev.dedup.outbox;

import dev.dedup.store.postgres.PostgresTableName;

/** Every statement the outbox runs on its table, built once from the checked name. */
final class OutboxTable {
    final PostgresTableName name;
    private final String table;

    OutboxTable(PostgresTableName name) {
        this.name = name;
        this.table = name.qualified();
    }

    /**
     * The table. {@code message_id} is a random UUID, unique by its 122 random bits without a unique index that every
     * append would maintain (a random key lands on a random index page); nothing looks an event up by it.
     */
    String createTable() {
        return "CREATE TABLE IF NOT EXISTS " + table + " (\n"
                + "    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,\n"
                + "    message_id   uuid        NOT NULL,\n"
                + "    destination  text        NOT NULL,\n"
                + "    key          text,\n"
                + "    payload      bytea       NOT NULL,\n"
                + "    headers      jsonb       NOT NULL DEFAULT '{}',\n"
                + "    created_at   timestamptz NOT NULL DEFAULT statement_timestamp(),\n"
                + "    published_at timestamptz,\n"
                + "    attempts     integer     NOT NULL DEFAULT 0,\n"
                + "    parked_at    timestamptz,\n"
                + "    last_error   text\n"
                + ")";
    }

    /**
     * Adds the columns of poison-event parking to a table made before them. A constant default and nullable columns:
     * PostgreSQL 11+ adds them without rewriting the table.
     */
    String addParkingColumns() {
        return "ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS attempts integer NOT NULL DEFAULT 0,"
                + " ADD COLUMN IF NOT EXISTS parked_at timestamptz, ADD COLUMN IF NOT EXISTS last_error text";
    }

    /**
     * Counts the parking columns the table has: the ALTER above takes the table's ACCESS EXCLUSIVE lock even when
     * they exist, waiting behind every open append and blocking new ones meanwhile, so it runs only when one is
     * missing.
     */
    String countParkingColumns() {
        return "SELECT count(*) FROM pg_attribute WHERE attrelid = '" + table.replace("'", "''") + "'::regclass"
                + " AND attname IN ('attempts', 'parked_at', 'last_error') AND NOT attisdropped";
    }

    /** The relay's scan: only unpublished rows, in id order; it stays small however large the table grows. */
    String createUnpublishedIndex() {
        return "CREATE INDEX IF NOT EXISTS " + name.derivedUnqualified("_unpublished_idx") + " ON " + table
                + " (id) WHERE published_at IS NULL";
    }

    /** The purge's scan: published rows by age. */
    String createPublishedIndex() {
        return "CREATE INDEX IF NOT EXISTS " + name.derivedUnqualified("_published_at_idx") + " ON " + table
                + " (published_at) WHERE published_at IS NOT NULL";
    }

    /**
     * Deletes published rows older than the retention in batches, committing after each, so a backlog never holds
     * locks for long.
     */
    String createPurgeProcedure() {
        return "CREATE OR REPLACE PROCEDURE " + name.derived("_purge") + "(retention interval,"
                + " batch_size integer DEFAULT 5000, max_batches integer DEFAULT 100)\n"
                + "LANGUAGE plpgsql AS $purge$\n"
                + "DECLARE\n"
                + "    deleted integer;\n"
                + "BEGIN\n"
                + "    FOR batch IN 1..max_batches LOOP\n"
                + "        " + purgeBatch("retention", "batch_size") + ";\n"
                + "        GET DIAGNOSTICS deleted = ROW_COUNT;\n"
                + "        COMMIT;\n"
                + "        EXIT WHEN deleted < batch_size;\n"
                + "    END LOOP;\n"
                + "END\n"
                + "$purge$";
    }

    /** One bounded batch; {@code retention} and {@code limit} are parameter markers or variables. */
    String purgeBatch(String retention, String limit) {
        return "DELETE FROM " + table + " WHERE id IN (SELECT id FROM " + table
                + " WHERE published_at < statement_timestamp() - " + retention + " ORDER BY published_at LIMIT "
                + limit + " FOR UPDATE SKIP LOCKED)";
    }

    String callPurge(long retentionSeconds, int batchSize, int maxBatches) {
        return "CALL " + name.derived("_purge") + "(interval '" + retentionSeconds + " seconds', " + batchSize + ", "
                + maxBatches + ")";
    }

    String dropPurgeProcedure() {
        return "DROP PROCEDURE IF EXISTS " + name.derived("_purge") + "(interval, integer, integer)";
    }

    /**
     * The channel relays LISTEN on: derived from the name by hash, since a channel is at most 63 bytes and a
     * schema-qualified name can be longer; a collision only wakes another outbox's relays for nothing.
     */
    String channel() {
        return "dedup_outbox_" + Integer.toHexString(name.display().hashCode());
    }

    /** Notifies the channel once per inserting statement; PostgreSQL delivers it at commit, never on rollback. */
    String createNotifyFunction() {
        return "CREATE OR REPLACE FUNCTION " + name.derived("_notify") + "() RETURNS trigger LANGUAGE plpgsql AS"
                + " $notify$ BEGIN PERFORM pg_notify('" + channel() + "', ''); RETURN NULL; END $notify$";
    }

    String dropNotifyTrigger() {
        return "DROP TRIGGER IF EXISTS " + name.derivedUnqualified("_notify") + " ON " + table;
    }

    String createNotifyTrigger() {
        return "CREATE TRIGGER " + name.derivedUnqualified("_notify") + " AFTER INSERT ON " + table
                + " FOR EACH STATEMENT EXECUTE FUNCTION " + name.derived("_notify") + "()";
    }

    String dropNotifyFunction() {
        return "DROP FUNCTION IF EXISTS " + name.derived("_notify") + "()";
    }

    String dropTable() {
        return "DROP TABLE IF EXISTS " + table;
    }

    String append() {
        return "INSERT INTO " + table + " (message_id, destination, key, payload, headers)"
                + " VALUES (?::uuid, ?, ?, ?, jsonb_object(?::text[], ?::text[]))";
    }

    /**
     * The relay's batch: the oldest unpublished events, locked, skipping rows another relay holds. An event with a
     * key is taken only when this transaction also gets the key's advisory lock, so while one relay holds events of
     * a key the others mostly skip that key. Mostly: the filter tries the lock row by row, so a relay that commits
     * midway through another's scan lets it take a key's later events without the earlier ones it skipped;
     * {@link #unpublishedOfKeys()} catches that. The lock is the transaction's: a relay that dies releases it with
     * its connection.
     */
    String nextBatch() {
        return "SELECT id, message_id, destination, key, payload,"
                + " ARRAY(SELECT k FROM jsonb_object_keys(headers) AS k ORDER BY k),"
                + " ARRAY(SELECT headers ->> k FROM jsonb_object_keys(headers) AS k ORDER BY k),"
                + " created_at FROM " + table
                + " WHERE published_at IS NULL AND parked_at IS NULL"
                + " AND (key IS NULL OR pg_try_advisory_xact_lock(hashtext('" + lockSpace() + "'), hashtext(key)))"
                + " ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED";
    }

    /**
     * The unpublished events of some keys up to an id, seen by a new snapshot taken after the batch was locked: a
     * batch event is published only when every earlier event of its key is published already or in the batch. A
     * parked event does not count: it no longer holds its key back.
     */
    String unpublishedOfKeys() {
        return "SELECT id, key FROM " + table + " WHERE published_at IS NULL AND parked_at IS NULL AND key = ANY(?)"
                + " AND id <= ?"
                + " ORDER BY id";
    }

    /** The advisory lock space of this table's keys; the name is a checked identifier, safe in a literal. */
    private String lockSpace() {
        return "dedup-outbox:" + name.display();
    }

    String markPublished() {
        return "UPDATE " + table + " SET published_at = statement_timestamp() WHERE id = ANY(?)";
    }

    /**
     * Counts a failed attempt for each event of {@code unnest(ids, errors)} and parks those that reached the limit.
     * Parameters: the limit, the ids (bigint[]), the errors (text[]). Returns each updated id, and whether this
     * statement parked it.
     */
    String recordRejections() {
        return "UPDATE " + table + " AS t SET attempts = t.attempts + 1, last_error = r.error,"
                + " parked_at = CASE WHEN t.attempts + 1 >= ? THEN statement_timestamp() END"
                + " FROM unnest(?::bigint[], ?::text[]) AS r(id, error)"
                + " WHERE t.id = r.id AND t.published_at IS NULL AND t.parked_at IS NULL"
                + " RETURNING t.id, t.parked_at IS NOT NULL";
    }

    String pending() {
        return "SELECT count(*) FROM " + table + " WHERE published_at IS NULL AND parked_at IS NULL";
    }

    String parked() {
        return "SELECT count(*) FROM " + table + " WHERE published_at IS NULL AND parked_at IS NOT NULL";
    }

    /** Puts every parked event back in line, with its attempts reset; its last error stays for the record. */
    String replayParked() {
        return "UPDATE " + table + " SET parked_at = NULL, attempts = 0"
                + " WHERE published_at IS NULL AND parked_at IS NOT NULL";
    }

    /** Milliseconds since the oldest unpublished event was appended, by the server's clock; null when none. */
    String oldestUnpublishedMillis() {
        // The lowest id is the oldest append, and the partial index finds it without scanning the backlog.
        return "SELECT (extract(epoch FROM statement_timestamp() - created_at) * 1000)::bigint FROM " + table
                + " WHERE published_at IS NULL AND parked_at IS NULL ORDER BY id LIMIT 1";
    }
}
