package dev.dedup.store.dynamodb;

import dev.dedup.DedupStore;
import dev.dedup.tck.DedupStoreContractTest;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The whole contract kit on the dynalite emulator, with claimAll running concurrently through the async client. */
class DynamoDbDedupStoreOnDynaliteContractTest extends DedupStoreContractTest {
    private static DynamoDbClient client;
    private static DynamoDbAsyncClient asyncClient;

    @BeforeAll
    static void createTheTable() {
        client = DynamoDbTestSupport.client(Duration.ofSeconds(10));
        asyncClient = DynamoDbTestSupport.asyncClient();
        DynamoDbDedupTables.create(client, DynamoDbTestSupport.TABLE);
    }

    @AfterAll
    static void closeClients() {
        client.close();
        asyncClient.close();
    }

    @Override
    protected DedupStore openStore(String namespace) {
        return DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .asyncClient(asyncClient).build();
    }

    @Override
    protected String storeUri(String namespace) {
        return DynamoDbTestSupport.uri(DynamoDbTestSupport.TABLE, namespace);
    }
}
