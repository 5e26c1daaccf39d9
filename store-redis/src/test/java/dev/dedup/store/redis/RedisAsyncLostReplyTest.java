package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.tck.BlockingOverAsync;

/** {@link RedisLostReplyTest} through {@code store.async()}: the non-blocking resends recognise their own outcome. */
class RedisAsyncLostReplyTest extends RedisLostReplyTest {
    @Override
    DedupStore open(String uri) {
        return BlockingOverAsync.of(DedupStores.open(uri));
    }
}
