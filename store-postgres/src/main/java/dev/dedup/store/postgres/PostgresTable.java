package dev.dedup.store.postgres;

import dev.dedup.jdbc.TableName;

/**
 * The dedup table's name, checked as a plain SQL identifier ({@code table} or {@code schema.table}) when the store
 * is built, so it can be placed in SQL text safely, and every statement the store runs on it.
 */
final class PostgresTable {
    private static final char QUOTE = '"';

    static final String DEFAULT_NAME = "dedup_claims";

    final String schema;
    final String name;
    /** Quoted, schema-qualified when a schema was given: safe to splice into SQL. */
    final String qualified;
    private final TableName table;

    private PostgresTable(TableName table) {
        this.table = table;
        this.schema = table.qualifier();
        this.name = table.name();
        this.qualified = table.quoted(QUOTE);
    }

    /** Parses {@code table} or {@code schema.table}; anything else is a configuration error naming the rule. */
    static PostgresTable parse(String table) {
        return new PostgresTable(TableName.parse(table, "schema"));
    }

    private static String quote(String identifier) {
        return QUOTE + identifier + QUOTE;
    }

    /** A name derived from the table's, in the table's schema (an index or the purge procedure). */
    String derived(String suffix) {
        return table.derived(suffix, QUOTE);
    }

    String display() {
        return table.display();
    }

    // ----- DDL --------------------------------------------------------------------------------------------------

    String createTable() {
        return "CREATE TABLE IF NOT EXISTS " + qualified + " (\n"
                + "    namespace    text        NOT NULL,\n"
                + "    key          text        NOT NULL,\n"
                + "    owner        text        NOT NULL,\n"
                + "    state        text        NOT NULL CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')),\n"
                + "    expires_at   timestamptz NOT NULL,\n"
                + "    result       bytea,\n"
                + "    fingerprint  bytea,\n"
                + "    created_at   timestamptz NOT NULL,\n"
                + "    completed_at timestamptz,\n"
                + "    PRIMARY KEY (namespace, key)\n"
                + ")";
    }

    String dropTable() {
        return "DROP TABLE IF EXISTS " + qualified;
    }

    String dropPurgeProcedure() {
        return "DROP PROCEDURE IF EXISTS " + derived("_purge") + "(integer, integer)";
    }

    /** Serves the purge: expired rows are found by expiry, oldest first. */
    String createExpiryIndex() {
        return "CREATE INDEX IF NOT EXISTS " + quoteName(name + "_expires_at_idx") + " ON " + qualified
                + " (expires_at)";
    }

    private static String quoteName(String identifier) {
        return quote(identifier);
    }

    /**
     * Deletes expired rows in batches, committing after each, so a large backlog never holds locks for long. Rows
     * locked by a claim in flight are skipped, not waited for.
     */
    String createPurgeProcedure() {
        return "CREATE OR REPLACE PROCEDURE " + derived("_purge") + "(batch_size integer DEFAULT 5000,"
                + " max_batches integer DEFAULT 100)\n"
                + "LANGUAGE plpgsql AS $purge$\n"
                + "DECLARE\n"
                + "    deleted integer;\n"
                + "BEGIN\n"
                + "    FOR batch IN 1..max_batches LOOP\n"
                + "        " + purgeBatch("batch_size") + ";\n"
                + "        GET DIAGNOSTICS deleted = ROW_COUNT;\n"
                + "        COMMIT;\n"
                + "        EXIT WHEN deleted < batch_size;\n"
                + "    END LOOP;\n"
                + "END\n"
                + "$purge$";
    }

    /** One bounded batch of the purge; {@code limit} is a parameter marker or a variable. */
    String purgeBatch(String limit) {
        return "DELETE FROM " + qualified + " AS t USING (SELECT namespace, key FROM " + qualified
                + " WHERE expires_at <= statement_timestamp() ORDER BY expires_at LIMIT " + limit
                + " FOR UPDATE SKIP LOCKED) AS expired"
                + " WHERE t.namespace = expired.namespace AND t.key = expired.key"
                + " AND t.expires_at <= statement_timestamp()";
    }

    String callPurge(int batchSize, int maxBatches) {
        return "CALL " + derived("_purge") + "(" + batchSize + ", " + maxBatches + ")";
    }

    // ----- the hot path ----------------------------------------------------------------------------------------
    //
    // Expiries come back as microseconds since the epoch (column expires_us), not as timestamptz: reading a
    // timestamp costs the driver a TimestampUtils per result set, which showed in the claim's client profile.

    /** {@code expires_at} as a bigint of microseconds since the epoch, named {@code expires_us}. */
    static final String EXPIRES_US = "(extract(epoch FROM expires_at) * 1000000)::bigint AS expires_us";
    //
    // Time is statement_timestamp(): the server's clock, fixed for one statement, and not frozen at the start of
    // a long caller transaction the way now() is.

    /** Adds the fingerprint column to a table made before it existed: nullable, no default, so no rewrite. */
    String addFingerprint() {
        return "ALTER TABLE " + qualified + " ADD COLUMN IF NOT EXISTS fingerprint bytea";
    }

    /**
     * The claim's one statement: insert the key when absent (a live duplicate costs no write and takes no lock:
     * DO NOTHING), else read the row once. It returns one row, ours or the one in the way, with {@code live}: whether
     * that row's expiry is still ahead by the server's clock. An expired row is taken over by {@link #takeOver()},
     * a second statement on a path that is rare by design (a lapsed lease, or a record the purge has not reached),
     * so the common fresh claim and live duplicate do not pay for an UPDATE in their plan. It returns no row when a
     * concurrent transaction committed the row after this statement's snapshot was taken; the caller then runs it
     * again. The values are parameters, not a parameter row joined in: the executor has one node fewer to start.
     * Parameters: namespace, key, owner, lease in ms, fingerprint (or null), then namespace and key again.
     */
    String claim() {
        return "WITH ins AS (INSERT INTO " + qualified
                + " (namespace, key, owner, state, expires_at, created_at, fingerprint)"
                + " VALUES (?, ?, ?, 'IN_PROGRESS', statement_timestamp() + ?::bigint * interval '1 millisecond',"
                + " statement_timestamp(), ?::bytea)"
                + " ON CONFLICT (namespace, key) DO NOTHING"
                + " RETURNING owner, state, expires_at, result, fingerprint)\n"
                + "SELECT owner, state, " + EXPIRES_US + ", result, fingerprint, true AS live FROM ins\n"
                + "UNION ALL SELECT owner, state, " + EXPIRES_US + ", result, fingerprint,"
                + " expires_at > statement_timestamp() FROM " + qualified
                + " WHERE namespace = ? AND key = ? AND NOT EXISTS (SELECT 1 FROM ins)";
    }

    /**
     * Takes over a row {@link #claim()} found expired, if it still is: the check and the write are one UPDATE, so
     * of two claimers racing for it one wins and the other, re-checking the row after the winner commits (READ
     * COMMITTED), updates nothing. A take-over replaces the fingerprint. Returns the new row, or none when the row
     * is no longer expired or is gone (the caller claims again). Parameters: owner, lease in ms, fingerprint (or
     * null), namespace, key.
     */
    String takeOver() {
        return "UPDATE " + qualified + " SET owner = ?, state = 'IN_PROGRESS',"
                + " expires_at = statement_timestamp() + ?::bigint * interval '1 millisecond', result = NULL,"
                + " created_at = statement_timestamp(), completed_at = NULL, fingerprint = ?"
                + " WHERE namespace = ? AND key = ? AND expires_at <= statement_timestamp()"
                + " RETURNING owner, state, " + EXPIRES_US + ", result, fingerprint";
    }

    /**
     * The batch claim in one statement: the same three steps for an array of distinct keys and owners. Inserts go
     * in key order and take-overs lock in key order, so two batches with overlapping keys cannot deadlock. A batch
     * stores no fingerprint (a take-over clears it) but returns the live rows' fingerprints.
     * Only the keys the insert met are read again, once ({@code found}), and only the expired ones among them are
     * locked; every read is a {@code key = ANY(array)} probe of the primary key. A join with the input instead let
     * the planner scan the whole table once it outgrew its statistics; an array of unknown length keeps the
     * estimate at a few rows whatever the table's size. Each read is also gated on having keys to read (a one-time
     * filter), so a batch of fresh keys reads nothing even under a generic plan made while the table was tiny,
     * which may scan instead of probing until the next ANALYZE replans it.
     * Parameters: namespace, lease in ms, keys[], owners[].
     */
    String claimAll() {
        return batchClaim("WITH p AS (SELECT ?::text AS namespace,"
                + " statement_timestamp() + ?::bigint * interval '1 millisecond' AS expires_at),\n"
                + "input AS (SELECT u.key, u.owner FROM unnest(?::text[], ?::text[]) AS u(key, owner)),\n",
                "p.expires_at", "(SELECT expires_at FROM p)", "NULL::bytea");
    }

    /**
     * {@link #claimAll()} for claims that each carry their own lease and fingerprint: the statement that single
     * claims arriving together are coalesced into ({@link ClaimCoalescer}). The same steps, locks and plans; a
     * take-over stores the claim's own fingerprint, as {@link #takeOver()} does. Parameters: namespace, keys[],
     * owners[], leases in ms[], fingerprints[] (nulls for none); the keys distinct.
     */
    String claimEach() {
        return batchClaim("WITH p AS (SELECT ?::text AS namespace),\n"
                + "input AS (SELECT u.key, u.owner,"
                + " statement_timestamp() + u.lease_ms * interval '1 millisecond' AS expires_at, u.fingerprint"
                + " FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bytea[])"
                + " AS u(key, owner, lease_ms, fingerprint)),\n",
                "input.expires_at", "input.expires_at", "input.fingerprint");
    }

    /** The batch claim's statement after its inputs: see {@link #claimAll()}. */
    private String batchClaim(String inputs, String insertedExpiry, String takenExpiry, String fingerprint) {
        return inputs
                + "ins AS (INSERT INTO " + qualified
                + " (namespace, key, owner, state, expires_at, created_at, fingerprint)"
                + " SELECT p.namespace, input.key, input.owner, 'IN_PROGRESS', " + insertedExpiry
                + ", statement_timestamp(), " + fingerprint
                + " FROM input, p ORDER BY input.key"
                + " ON CONFLICT (namespace, key) DO NOTHING"
                + " RETURNING key, owner, state, expires_at, result, fingerprint),\n"
                + "taken AS (SELECT ARRAY(SELECT key FROM input WHERE key NOT IN (SELECT key FROM ins)) AS keys),\n"
                + "found AS (SELECT t.key, t.owner, t.state, t.expires_at, t.result, t.fingerprint FROM " + qualified
                + " AS t WHERE cardinality((SELECT keys FROM taken)) > 0 AND t.namespace = (SELECT namespace FROM p)"
                + " AND t.key = ANY ((SELECT keys FROM taken)::text[])),\n"
                + "expired AS (SELECT t.key FROM " + qualified + " AS t"
                + " WHERE EXISTS (SELECT 1 FROM found WHERE expires_at <= statement_timestamp())"
                + " AND t.namespace = (SELECT namespace FROM p)"
                + " AND t.key = ANY (ARRAY(SELECT key FROM found WHERE expires_at <= statement_timestamp()))"
                + " AND t.expires_at <= statement_timestamp() ORDER BY t.key FOR UPDATE OF t),\n"
                + "takeover AS (UPDATE " + qualified + " AS t SET owner = input.owner, state = 'IN_PROGRESS',"
                + " expires_at = " + takenExpiry + ", result = NULL, created_at = statement_timestamp(),"
                + " completed_at = NULL, fingerprint = " + fingerprint
                + " FROM input WHERE EXISTS (SELECT 1 FROM expired) AND t.namespace = (SELECT namespace FROM p)"
                + " AND t.key = ANY (ARRAY(SELECT key FROM expired)) AND t.key = input.key"
                + " RETURNING t.key, t.owner, t.state, t.expires_at, t.result, t.fingerprint)\n"
                + "SELECT key, owner, state, " + EXPIRES_US + ", result, fingerprint FROM ins\n"
                + "UNION ALL SELECT key, owner, state, " + EXPIRES_US + ", result, fingerprint FROM takeover\n"
                + "UNION ALL SELECT key, owner, state, " + EXPIRES_US + ", result, fingerprint FROM found"
                + " WHERE expires_at > statement_timestamp()";
    }

    /**
     * Parameters: final state (COMPLETED or FAILED), retention in ms, result, namespace, key, owner. With
     * {@code leaseClock} false (inside the claiming transaction) the expiry is not checked: see {@link #heldBy}.
     */
    String complete(boolean leaseClock) {
        return "UPDATE " + qualified + " SET " + ending("?", "?::bigint", "?")
                + " WHERE namespace = ? AND key = ? AND " + heldBy(leaseClock);
    }

    /**
     * What a complete or fail writes: the final state, an expiry {@code retentionMillis} from now, the result and
     * the time. The owner and the claim's fingerprint stay as they were.
     */
    private static String ending(String state, String retentionMillis, String result) {
        return "state = " + state + ", expires_at = statement_timestamp() + " + retentionMillis
                + " * interval '1 millisecond', result = " + result + ", completed_at = statement_timestamp()";
    }

    /**
     * A batch of settlements in one statement, each decided by the rule of its single call ({@link #complete} or
     * {@link #release}, see {@link #heldBy}): completes and fails update their rows, releases delete theirs. The
     * rows are locked first, in key order, so two batches over the same keys cannot deadlock; only rows still held
     * by their settlement's owner are locked. Returns the keys that were settled. Every row is found by a
     * {@code key = ANY(array)} probe of the primary key, as in {@link #claimAll}.
     * Parameters: namespace, keys[], owners[], end states[] (COMPLETED, FAILED, or null to release), retentions in
     * ms[], results[] (bytea, null for none).
     */
    String settleAll(boolean leaseClock) {
        return "WITH p AS (SELECT ?::text AS namespace),\n"
                + "input AS (SELECT u.key, u.owner, u.state, u.retention_ms, u.result"
                + " FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bytea[])"
                + " AS u(key, owner, state, retention_ms, result)),\n"
                + "held AS (SELECT t.key FROM " + qualified + " AS t JOIN input ON input.key = t.key"
                + " WHERE t.namespace = (SELECT namespace FROM p) AND t.key = ANY (ARRAY(SELECT key FROM input))"
                + " AND " + heldBy(leaseClock, "t.", "input.owner") + " ORDER BY t.key FOR UPDATE OF t),\n"
                + "ended AS (UPDATE " + qualified + " AS t SET "
                + ending("input.state", "input.retention_ms", "input.result")
                + " FROM input WHERE input.state IS NOT NULL AND t.namespace = (SELECT namespace FROM p)"
                + " AND t.key = ANY (ARRAY(SELECT key FROM held)) AND t.key = input.key"
                + " AND " + heldBy(leaseClock, "t.", "input.owner") + " RETURNING t.key),\n"
                + "released AS (DELETE FROM " + qualified + " AS t USING input"
                + " WHERE input.state IS NULL AND t.namespace = (SELECT namespace FROM p)"
                + " AND t.key = ANY (ARRAY(SELECT key FROM held)) AND t.key = input.key"
                + " AND " + heldBy(leaseClock, "t.", "input.owner") + " RETURNING t.key)\n"
                + "SELECT key FROM ended UNION ALL SELECT key FROM released";
    }

    /** Parameters: namespace, key, owner. */
    String release(boolean leaseClock) {
        return "DELETE FROM " + qualified + " WHERE namespace = ? AND key = ? AND " + heldBy(leaseClock);
    }

    /** Parameters: lease in ms, namespace, key, owner. */
    String extend(boolean leaseClock) {
        return "UPDATE " + qualified
                + " SET expires_at = statement_timestamp() + ?::bigint * interval '1 millisecond'"
                + " WHERE namespace = ? AND key = ? AND " + heldBy(leaseClock);
    }

    /**
     * The live row as it is, for an operator: a plain read, so it takes no lock and waits for none. A row past its
     * expiry is not returned: by the claim's rule it no longer holds the key. Parameters: namespace, key.
     */
    String inspect() {
        return "SELECT owner, state, " + EXPIRES_US + ", result, fingerprint FROM " + qualified
                + " WHERE namespace = ? AND key = ? AND expires_at > statement_timestamp()";
    }

    /**
     * The operator's delete: the row goes whatever its state and owner. An expired row goes too (the purge would
     * delete it anyway) but is reported as not live. Parameters: namespace, key. Returns one boolean row, or none.
     */
    String forget() {
        return "DELETE FROM " + qualified + " WHERE namespace = ? AND key = ?"
                + " RETURNING expires_at > statement_timestamp()";
    }

    /** The state of the record if {@code owner} holds or held it: how a retry learns what a lost reply said. */
    String stateOfOwner() {
        return "SELECT state FROM " + qualified + " WHERE namespace = ? AND key = ? AND owner = ?";
    }

    /**
     * {@link #stateOfOwner} for a batch: each key's state where its owner holds or held it; keys of other owners,
     * or gone, return no row. Parameters: namespace, keys[], owners[].
     */
    String statesOfOwners() {
        return "SELECT t.key, t.state FROM " + qualified + " AS t"
                + " JOIN unnest(?::text[], ?::text[]) AS u(key, owner) ON u.key = t.key AND u.owner = t.owner"
                + " WHERE t.namespace = ?";
    }

    /**
     * The record is still the owner's claim. On a pooled connection its lease must not have run out, since another
     * consumer may take the row over after that. Inside the transaction that claimed it nobody can (the
     * uncommitted insert or the row lock keeps them out), so there the lease clock does not matter.
     */
    private static String heldBy(boolean leaseClock) {
        return heldBy(leaseClock, "", "?");
    }

    /** {@link #heldBy(boolean)} on the row named {@code row} (an alias and a dot, or empty) for {@code owner}. */
    private static String heldBy(boolean leaseClock, String row, String owner) {
        return row + "owner = " + owner + " AND " + row + "state = 'IN_PROGRESS'"
                + (leaseClock ? " AND " + row + "expires_at > statement_timestamp()" : "");
    }

    // ----- schema checks and upgrades --------------------------------------------------------------------------

    /** The table's columns and types, found the way the statements find the table: through the search_path. */
    String describeColumns() {
        return "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a"
                + " WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped";
    }

    /** The table's CHECK constraints on the state column, by name and definition. */
    String stateChecks() {
        return "SELECT c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c"
                + " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)"
                + " WHERE c.conrelid = to_regclass(?) AND c.contype = 'c' AND a.attname = 'state'";
    }

    /**
     * Replaces a state CHECK made before FAILED existed. NOT VALID first, then VALIDATE, so the table is locked
     * exclusively only for the swap, not for the scan (the new check allows more, so every row passes).
     */
    String[] allowFailed(String constraint) {
        String name = '"' + constraint.replace("\"", "\"\"") + '"';
        return new String[] {
            "ALTER TABLE " + qualified + " DROP CONSTRAINT " + name + ", ADD CONSTRAINT " + name
                    + " CHECK (state IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')) NOT VALID",
            "ALTER TABLE " + qualified + " VALIDATE CONSTRAINT " + name
        };
    }
}
