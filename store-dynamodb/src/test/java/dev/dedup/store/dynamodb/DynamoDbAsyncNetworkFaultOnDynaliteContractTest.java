package dev.dedup.store.dynamodb;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/**
 * The kit's network faults through {@code store.async()}: the SDK's resends after a lost reply, its timeouts on a
 * slow or black-holed endpoint and fast failures on a refused connection, on the non-blocking path.
 */
class DynamoDbAsyncNetworkFaultOnDynaliteContractTest extends DynamoDbNetworkFaultOnDynaliteContractTest {
    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        return BlockingOverAsync.of(super.openStoreVia(host, port, namespace));
    }
}
