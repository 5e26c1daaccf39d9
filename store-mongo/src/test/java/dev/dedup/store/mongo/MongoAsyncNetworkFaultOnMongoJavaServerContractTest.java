package dev.dedup.store.mongo;

import com.mongodb.client.MongoClient;
import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;

/**
 * The kit's network faults through {@code store.async()} on the reactive-streams driver: the resend after a lost
 * reply, the deadline on a slow or black-holed server and fast failures on a refused connection, on the
 * non-blocking path. Both clients talk to the server through the kit's fault proxy with the same short timeouts.
 */
class MongoAsyncNetworkFaultOnMongoJavaServerContractTest extends MongoNetworkFaultOnMongoJavaServerContractTest {
    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        MongoClient client = MongoFaultClients.client(host, port, operationTimeout());
        com.mongodb.reactivestreams.client.MongoClient reactive =
                MongoFaultClients.reactiveClient(host, port, operationTimeout());
        return BlockingOverAsync.of(MongoDedupStore.builder(client, DATABASE).reactive(reactive)
                .namespace(namespace).timeout(operationTimeout()).onClose(() -> {
                    reactive.close();
                    client.close();
                }).build());
    }
}
