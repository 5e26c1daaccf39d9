package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/** {@link RedisClusterSettleAllTest} with every call made through {@code store.async()}. */
class RedisClusterAsyncSettleAllTest extends RedisClusterSettleAllTest {

    @Override
    DedupStore openStore(String namespace) {
        return BlockingOverAsync.of(super.openStore(namespace));
    }
}
