package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/** {@link RedisSettleAllTest} with every call made through {@code store.async()}: Lettuce's async API. */
class RedisAsyncSettleAllTest extends RedisSettleAllTest {

    @Override
    DedupStore wrap(DedupStore opened) {
        return BlockingOverAsync.of(opened);
    }
}
