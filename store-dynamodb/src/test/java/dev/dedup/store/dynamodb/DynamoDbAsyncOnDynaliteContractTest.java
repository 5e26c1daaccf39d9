package dev.dedup.store.dynamodb;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/** The whole contract kit on the dynalite emulator, every call made through the native {@code store.async()}. */
class DynamoDbAsyncOnDynaliteContractTest extends DynamoDbDedupStoreOnDynaliteContractTest {

    @Override
    protected DedupStore openStore(String namespace) {
        return BlockingOverAsync.of(super.openStore(namespace));
    }
}
