package dev.dedup.jdbc;

import dev.dedup.DedupConfigurationException;
import java.util.regex.Pattern;

/**
 * A SQL store's table name, {@code table} or {@code qualifier.table} (a schema, or a database), checked as plain
 * identifiers when the store is built, so that it can be placed in SQL text safely, quoted in the server's way.
 * Internal plumbing of dedup's SQL stores.
 */
public final class TableName {
    /** Letters, digits and underscores; short enough that derived names (index, procedure, event) stay under 63. */
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,47}");

    private final String qualifier;
    private final String name;

    private TableName(String qualifier, String name) {
        this.qualifier = qualifier;
        this.name = name;
    }

    /**
     * Parses {@code table} or {@code qualifier.table}; anything else is a configuration error naming the rule.
     *
     * @param table the name as configured
     * @param qualifierWord what the qualifier is called on this server, for the message: {@code "schema"} or
     *     {@code "database"}
     * @return the checked name
     * @throws DedupConfigurationException if a part is not letters, digits and underscores (first not a digit, at
     *     most 48), or there are more than two parts
     */
    public static TableName parse(String table, String qualifierWord) {
        if (table == null) {
            throw invalid("null", qualifierWord);
        }
        String[] parts = table.split("\\.", -1);
        if (parts.length > 2) {
            throw invalid("'" + table + "'", qualifierWord);
        }
        for (String part : parts) {
            if (!IDENTIFIER.matcher(part).matches()) {
                throw invalid("'" + table + "'", qualifierWord);
            }
        }
        return parts.length == 2 ? new TableName(parts[0], parts[1]) : new TableName(null, parts[0]);
    }

    private static DedupConfigurationException invalid(String shown, String qualifierWord) {
        return new DedupConfigurationException("table must be an identifier or " + qualifierWord + ".identifier of"
                + " letters, digits and underscores (first not a digit, at most 48 each), but was " + shown);
    }

    /** {@return the schema or database, or null when none was given} */
    public String qualifier() {
        return qualifier;
    }

    /** {@return the table's own name, unqualified} */
    public String name() {
        return name;
    }

    /** {@return the name as given, unquoted: for messages and job names} */
    public String display() {
        return qualifier == null ? name : qualifier + "." + name;
    }

    /**
     * {@return the name quoted with {@code quote}, qualified when a qualifier was given}
     *
     * @param quote the server's identifier quote: {@code "} or {@code `}
     */
    public String quoted(char quote) {
        return derived("", quote);
    }

    /**
     * {@return a name derived from the table's (an index, a procedure), quoted, qualified as the table is}
     *
     * @param suffix appended to the table's name, such as {@code "_purge"}
     * @param quote the server's identifier quote: {@code "} or {@code `}
     */
    public String derived(String suffix, char quote) {
        return (qualifier == null ? "" : quote + qualifier + quote + ".") + quote + name + suffix + quote;
    }
}
