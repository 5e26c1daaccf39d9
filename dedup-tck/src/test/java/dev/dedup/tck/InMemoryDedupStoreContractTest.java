package dev.dedup.tck;

import dev.dedup.DedupStore;
import dev.dedup.memory.InMemoryDedupStore;

/** The kit's self-test: the in-memory reference store keeps the whole contract. */
class InMemoryDedupStoreContractTest extends DedupStoreContractTest {

    @Override
    protected DedupStore openStore(String namespace) {
        return new InMemoryDedupStore(namespace);
    }

    @Override
    protected String storeUri(String namespace) {
        return "memory:?namespace=" + namespace;
    }
}
