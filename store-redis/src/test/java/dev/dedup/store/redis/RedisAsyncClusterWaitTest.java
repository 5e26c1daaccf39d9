package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/** {@link RedisClusterWaitTest} through {@code store.async()}: the async claim's WAIT follows its own write too. */
class RedisAsyncClusterWaitTest extends RedisClusterWaitTest {
    @Override
    DedupStore view(RedisDedupStore store) {
        return BlockingOverAsync.of(store);
    }
}
