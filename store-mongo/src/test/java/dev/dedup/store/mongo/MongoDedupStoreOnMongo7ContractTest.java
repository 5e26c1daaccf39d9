package dev.dedup.store.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.dedup.DedupStore;
import dev.dedup.tck.DedupStoreContractTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The whole contract kit against a real mongod (mongo:7 through Testcontainers, or DEDUP_TEST_MONGOD_URL). Tagged
 * docker: it runs only with {@code mvn -Pdocker test}, because it needs a Docker engine.
 */
@Tag("docker")
class MongoDedupStoreOnMongo7ContractTest extends DedupStoreContractTest {
    private static final String DATABASE = "dedup_tck";

    private static String url;
    private static MongoClient client;
    private static MongoDatabase database;

    @BeforeAll
    static void connect() {
        url = RealMongod.url();
        client = MongoClients.create(url);
        database = client.getDatabase(DATABASE);
        MongoDedupStore.builder(database).validateIndexes(false).build().createIndexes();
    }

    @AfterAll
    static void disconnect() {
        if (client != null) {
            client.close();
        }
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return MongoDedupStore.builder(database).namespace(namespace).build();
    }

    @Override
    protected String storeUri(String namespace) {
        return url + "/?database=" + DATABASE + "&namespace=" + namespace;
    }
}
