package dev.dedup.tck;

import dev.dedup.DedupStore;
import dev.dedup.memory.InMemoryDedupStore;

/** The kit through the in-memory store's {@code async()} view: the view's checks and its completed stages. */
class InMemoryAsyncContractTest extends InMemoryDedupStoreContractTest {

    @Override
    protected DedupStore openStore(String namespace) {
        return BlockingOverAsync.of(super.openStore(namespace));
    }
}
