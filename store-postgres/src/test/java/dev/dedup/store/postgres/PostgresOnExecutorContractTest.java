package dev.dedup.store.postgres;

import dev.dedup.AsyncDedupStore;
import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/**
 * The whole kit on a real PostgreSQL through {@link AsyncDedupStore#onExecutor}: JDBC blocks, so the async API of
 * this store is its blocking calls on the caller's executor, and {@code async()} itself names that adapter.
 */
class PostgresOnExecutorContractTest extends PostgresDedupStoreContractTest {

    @Override
    protected DedupStore openStore(String namespace) {
        return BlockingOverAsync.onExecutor(super.openStore(namespace));
    }
}
