package dev.dedup.store.redis;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/**
 * The kit's network faults through {@code store.async()}: resends after a lost reply, the deadline on a slow or
 * black-holed server and fast failures on a refused connection, on the non-blocking path.
 */
class RedisAsyncNetworkFaultContractTest extends RedisNetworkFaultContractTest {
    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        return BlockingOverAsync.of(super.openStoreVia(host, port, namespace));
    }
}
