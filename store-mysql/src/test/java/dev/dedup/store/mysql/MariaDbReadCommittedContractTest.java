package dev.dedup.store.mysql;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupStore;
import dev.dedup.tck.DedupStoreContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract kit on the real MariaDB, every connection at READ COMMITTED. */
class MariaDbReadCommittedContractTest extends DedupStoreContractTest {
    /** The pool of the class running now: each subclass opens its own, at its own isolation level. */
    private static HikariDataSource pool;

    @BeforeAll
    static void createTheTable() {
        openPool("TRANSACTION_READ_COMMITTED");
    }

    static void openPool(String isolation) {
        pool = MariaDbTestSupport.pool(isolation, 10);
        MysqlDedupStore.builder(pool).validateSchema(false).build().createSchema();
    }

    @AfterAll
    static void closeThePool() {
        pool.close();
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return MysqlDedupStore.builder(pool).namespace(namespace).build();
    }

    @Override
    protected String storeUri(String namespace) {
        return MariaDbTestSupport.jdbcUrl() + "&namespace=" + namespace + "&poolSize=2";
    }
}
