package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/** The whole contract kit against the real Redis Cluster, every call made through {@code store.async()}. */
class RedisClusterAsyncContractTest extends RedisClusterDedupStoreContractTest {

    @Override
    protected DedupStore openStore(String namespace) {
        return BlockingOverAsync.of(super.openStore(namespace));
    }
}
