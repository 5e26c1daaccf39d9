package dev.dedup.jdbc;

import dev.dedup.DedupStore;
import java.sql.Connection;
import javax.sql.DataSource;

/**
 * A SQL store that can work inside the caller's JDBC transaction, the transactional inbox: implemented by the
 * PostgreSQL and the MySQL/MariaDB stores, so that a framework (the Spring Boot starter's
 * {@code @Idempotent(inTransaction = true)}) can join a transaction it did not open without knowing the store's class.
 */
public interface TransactionalInbox {

    /**
     * {@return where the store's own connections come from: the application's {@code DataSource} it was built on,
     * or, for a store opened by URI, a pool of its own} A transaction on a connection from another {@code DataSource}
     * runs in another session, or another database, and cannot hold the store's claims.
     */
    DataSource dataSource();

    /**
     * This store on the caller's open {@code transaction}: claims, completions and releases run on that connection
     * and are never committed, rolled back or closed by the store.
     *
     * @param transaction the caller's connection, auto-commit off
     * @return the store's view of {@code transaction}, for that transaction only
     * @throws IllegalArgumentException when {@code transaction} is in auto-commit mode
     */
    DedupStore inTransaction(Connection transaction);
}
