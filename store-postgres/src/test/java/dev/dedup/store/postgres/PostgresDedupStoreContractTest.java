package dev.dedup.store.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupStore;
import dev.dedup.tck.DedupStoreContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The whole contract kit against the real PostgreSQL server. */
class PostgresDedupStoreContractTest extends DedupStoreContractTest {
    private static HikariDataSource pool;

    @BeforeAll
    static void createTheTable() {
        pool = PostgresTestSupport.pool(10);
        PostgresDedupStore.builder(pool).validateSchema(false).build().createSchema();
    }

    @AfterAll
    static void closeThePool() {
        pool.close();
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return PostgresDedupStore.builder(pool).namespace(namespace).build();
    }

    @Override
    protected String storeUri(String namespace) {
        return PostgresTestSupport.jdbcUrl() + "&namespace=" + namespace + "&poolSize=2";
    }
}
