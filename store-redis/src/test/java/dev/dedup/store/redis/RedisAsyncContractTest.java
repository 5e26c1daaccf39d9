package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/** The whole contract kit against a real standalone Redis, every call made through {@code store.async()}. */
class RedisAsyncContractTest extends RedisDedupStoreContractTest {

    @Override
    protected DedupStore openStore(String namespace) {
        return BlockingOverAsync.of(super.openStore(namespace));
    }
}
