package dev.dedup.store.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;
import dev.dedup.tck.DedupStoreContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract kit, fuzz included, against mongo-java-server 1.47.0 in-process (or DEDUP_TEST_MONGO_URL),
 * every call made through {@code store.async()} on the reactive-streams driver.
 */
class MongoAsyncOnMongoJavaServerContractTest extends DedupStoreContractTest {
    private static final String DATABASE = "dedup_tck_async";

    private static MongoTestServer server;
    private static MongoClient client;
    private static com.mongodb.reactivestreams.client.MongoClient reactiveClient;

    @BeforeAll
    static void startServer() {
        server = MongoTestServer.start();
        client = MongoClients.create(server.url());
        reactiveClient = com.mongodb.reactivestreams.client.MongoClients.create(server.url());
        MongoDedupStore.builder(client, DATABASE).validateIndexes(false).build().createIndexes();
    }

    @AfterAll
    static void stopServer() {
        reactiveClient.close();
        client.close();
        server.close();
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return BlockingOverAsync.of(MongoDedupStore.builder(client, DATABASE).reactive(reactiveClient)
                .namespace(namespace).build());
    }

    @Override
    protected String storeUri(String namespace) {
        return server.url() + "/?database=" + DATABASE + "&namespace=" + namespace;
    }
}
