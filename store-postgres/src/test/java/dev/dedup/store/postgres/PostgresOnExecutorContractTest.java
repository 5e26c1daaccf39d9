package dev.dedup.store.postgres;

import dev.dedup.AsyncDedupStore;
import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole kit on a real PostgreSQL through {@link AsyncDedupStore#onExecutor}: JDBC blocks, so the async API of
 * this store is its blocking calls on the caller's executor, and {@code async()} itself names that adapter.
 */
class PostgresOnExecutorContractTest extends PostgresDedupStoreContractTest {
    private static ExecutorService pool;

    @BeforeAll
    static void startPool() {
        pool = Executors.newFixedThreadPool(8);
    }

    @AfterAll
    static void stopPool() {
        pool.shutdownNow();
    }

    @Override
    protected DedupStore openStore(String namespace) {
        DedupStore store = super.openStore(namespace);
        return BlockingOverAsync.of(AsyncDedupStore.onExecutor(store, pool), store);
    }
}
