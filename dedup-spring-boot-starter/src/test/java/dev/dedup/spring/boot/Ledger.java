package dev.dedup.spring.boot;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/** A transactional service that calls an {@link Idempotent} method inside its transaction, then writes a row. */
public class Ledger {
    private final JdbcTemplate jdbc;
    private final Billing billing;

    Ledger(JdbcTemplate jdbc, Billing billing) {
        this.jdbc = jdbc;
        this.billing = billing;
        jdbc.execute("CREATE TABLE IF NOT EXISTS ledger_entries (id text NOT NULL, receipt text NOT NULL)");
    }

    /** Captures and books the capture; with {@code rollBack}, throws after both, so the transaction rolls back. */
    @Transactional
    public String book(String id, boolean rollBack) {
        String receipt = billing.capture(id);
        jdbc.update("INSERT INTO ledger_entries (id, receipt) VALUES (?, ?)", id, receipt);
        if (rollBack) {
            throw new IllegalStateException("rolled back after the capture");
        }
        return receipt;
    }

    /** Captures the same id twice in one transaction, as a batch with a duplicate would. */
    @Transactional
    public String bookTwice(String id) {
        String first = billing.capture(id);
        String second = billing.capture(id);
        jdbc.update("INSERT INTO ledger_entries (id, receipt) VALUES (?, ?)", id, first + "/" + second);
        return first + "/" + second;
    }

    /** Calls a method with a transaction of its own, then rolls back its own. */
    @Transactional
    public void captureOnItsOwnThenRollBack(String id) {
        billing.captureOnItsOwn(id);
        throw new IllegalStateException("rolled back after the inner commit");
    }

    int entries(String id) {
        return jdbc.queryForObject("SELECT count(*) FROM ledger_entries WHERE id = ?", Integer.class, id);
    }
}
