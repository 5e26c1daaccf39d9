package dev.dedup.store.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.dedup.DedupStore;
import dev.dedup.tck.BlockingOverAsync;
import dev.dedup.tck.DedupStoreContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The whole contract kit against a real mongod (mongo:7 through Testcontainers, or DEDUP_TEST_MONGOD_URL), every
 * call made through {@code store.async()} on the reactive-streams driver. Tagged docker: it runs only with
 * {@code mvn -Pdocker test}, because it needs a Docker engine.
 */
@Tag("docker")
class MongoAsyncOnMongo7ContractTest extends DedupStoreContractTest {
    private static final String DATABASE = "dedup_tck_async";

    private static String url;
    private static MongoClient client;
    private static com.mongodb.reactivestreams.client.MongoClient reactiveClient;

    @BeforeAll
    static void connect() {
        url = RealMongod.url();
        client = MongoClients.create(url);
        reactiveClient = com.mongodb.reactivestreams.client.MongoClients.create(url);
        MongoDedupStore.builder(client, DATABASE).validateIndexes(false).build().createIndexes();
    }

    @AfterAll
    static void disconnect() {
        if (reactiveClient != null) {
            reactiveClient.close();
        }
        if (client != null) {
            client.close();
        }
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return BlockingOverAsync.of(MongoDedupStore.builder(client, DATABASE).reactive(reactiveClient)
                .namespace(namespace).build());
    }

    @Override
    protected String storeUri(String namespace) {
        return url + "/?database=" + DATABASE + "&namespace=" + namespace;
    }
}
