package dev.dedup.tck;

import dev.dedup.AsyncDedupStore;
import dev.dedup.DedupStore;
import dev.dedup.memory.InMemoryDedupStore;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The kit through {@link AsyncDedupStore#onExecutor}, the adapter for blocking stores, over the in-memory store: each
 * call runs on the test's own pool and the kit waits for its stage.
 */
class OnExecutorContractTest extends InMemoryDedupStoreContractTest {
    private static ExecutorService pool;

    @BeforeAll
    static void startPool() {
        pool = Executors.newFixedThreadPool(4);
    }

    @AfterAll
    static void stopPool() {
        pool.shutdownNow();
    }

    @Override
    protected DedupStore openStore(String namespace) {
        DedupStore store = new InMemoryDedupStore(namespace);
        return BlockingOverAsync.of(AsyncDedupStore.onExecutor(store, pool), store);
    }
}
