package dev.dedup.store.mongo;

import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;
import dev.dedup.tck.FaultProxy;

/**
 * The lost-reply tests, strictly, through {@code store.async()}: the non-blocking path resends after a broken
 * connection and recognises what its first try did, as the blocking one does.
 */
class MongoAsyncFaultsOnMongoJavaServerTest extends MongoFaultsOnMongoJavaServerTest {
    @Override
    protected DedupStore openStore(MongoDedupStore.Builder proxied, FaultProxy proxy) {
        com.mongodb.reactivestreams.client.MongoClient reactive =
                MongoFaultClients.reactiveClient(proxy.host(), proxy.port(), TIMEOUT);
        return BlockingOverAsync.of(proxied.reactive(reactive).onClose(reactive::close).build());
    }
}
