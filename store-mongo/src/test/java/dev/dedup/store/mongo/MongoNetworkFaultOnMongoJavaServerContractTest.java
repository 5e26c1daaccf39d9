package dev.dedup.store.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.dedup.DedupStore;
import dev.dedup.tck.NetworkFaultContractTest;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The network-fault contract on mongo-java-server 1.47.0 in-process (no real mongod can run here): the store under
 * test talks to it through the kit's fault proxy with 1 s connect, socket, server-selection and operation timeouts.
 * The test server has no sessions, so the driver retries no write: recovery from a lost reply is the store's own.
 */
class MongoNetworkFaultOnMongoJavaServerContractTest extends NetworkFaultContractTest {
    static final String DATABASE = "dedup_faults";

    private static MongoTestServer server;

    @BeforeAll
    static void startServer() {
        server = MongoTestServer.startInProcess();
        try (MongoClient client = MongoClients.create(server.url())) {
            MongoDedupStore.builder(client, DATABASE).validateIndexes(false).build().createIndexes();
        }
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected InetSocketAddress server() {
        return server.address();
    }

    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        MongoClient client = MongoFaultClients.client(host, port, operationTimeout());
        return MongoDedupStore.builder(client, DATABASE).namespace(namespace).timeout(operationTimeout())
                .onClose(client::close).build();
    }
}
