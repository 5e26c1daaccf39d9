package dev.dedup.store.postgres;

/**
 * A table name checked the way the store checks its own ({@code table} or {@code schema.table}, letters, digits and
 * underscores), so that modules building their own tables next to the store's (the outbox) splice it into SQL
 * safely and refuse the same names.
 */
public final class PostgresTableName {
    private final PostgresTable table;

    private PostgresTableName(PostgresTable table) {
        this.table = table;
    }

    /**
     * Checks {@code table}.
     *
     * @param table {@code name} or {@code schema.name}
     * @return the checked name
     * @throws dev.dedup.DedupConfigurationException naming the rule and the value, when it is not such a name
     */
    public static PostgresTableName parse(String table) {
        return new PostgresTableName(PostgresTable.parse(table));
    }

    /** {@return the name quoted, schema-qualified when a schema was given: safe to splice into SQL} */
    public String qualified() {
        return table.qualified;
    }

    /**
     * A name derived from the table's, in the table's schema, quoted: an index, a procedure.
     *
     * @param suffix appended to the table's name, such as {@code "_purge"}
     * @return the derived name, quoted
     */
    public String derived(String suffix) {
        return table.derived(suffix);
    }

    /**
     * The unqualified derived name, quoted: what {@code CREATE INDEX} takes (an index lives in its table's schema).
     *
     * @param suffix appended to the table's name, such as {@code "_unpublished_idx"}
     * @return the derived name without schema, quoted
     */
    public String derivedUnqualified(String suffix) {
        return '"' + table.name + suffix + '"';
    }

    /** {@return the name as given, unquoted: for messages and job names} */
    public String display() {
        return table.display();
    }

    @Override
    public String toString() {
        return display();
    }
}
