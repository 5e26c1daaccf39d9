package dev.dedup.store.mysql;

import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract kit on the real MariaDB at REPEATABLE READ, InnoDB's default: next-key and gap locks, and the
 * deadlocks they bring, under the kit's races. The URI the kit opens asks for the same level through the driver.
 */
class MariaDbRepeatableReadContractTest extends MariaDbReadCommittedContractTest {

    /** Hides the READ COMMITTED pool's set-up: this class's pool is the only one open while it runs. */
    @BeforeAll
    static void createTheTable() {
        openPool("TRANSACTION_REPEATABLE_READ");
    }

    @Override
    protected String storeUri(String namespace) {
        return super.storeUri(namespace) + "&transactionIsolation=REPEATABLE-READ";
    }
}
