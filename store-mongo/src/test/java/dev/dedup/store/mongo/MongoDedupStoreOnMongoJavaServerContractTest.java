package dev.dedup.store.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.dedup.DedupStore;
import dev.dedup.tck.DedupStoreContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole contract kit, fuzz included, against mongo-java-server 1.47.0 started in-process: a MongoDB
 * wire-protocol server standing in because no real mongod can run here (or against DEDUP_TEST_MONGO_URL when set).
 * The same kit runs on a real mongo:7 in {@link MongoDedupStoreOnMongo7ContractTest} (profile docker).
 */
class MongoDedupStoreOnMongoJavaServerContractTest extends DedupStoreContractTest {
    private static final String DATABASE = "dedup_tck";

    private static MongoTestServer server;
    private static MongoClient client;
    private static MongoDatabase database;

    @BeforeAll
    static void startServer() {
        server = MongoTestServer.start();
        client = MongoClients.create(server.url());
        database = client.getDatabase(DATABASE);
        MongoDedupStore.builder(database).validateIndexes(false).build().createIndexes();
    }

    @AfterAll
    static void stopServer() {
        client.close();
        server.close();
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return MongoDedupStore.builder(database).namespace(namespace).build();
    }

    @Override
    protected String storeUri(String namespace) {
        return server.url() + "/?database=" + DATABASE + "&namespace=" + namespace;
    }
}
