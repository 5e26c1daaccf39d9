package dev.dedup.store.dynamodb;

import dev.dedup.DedupStore;
import dev.dedup.tck.NetworkFaultContractTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The network-fault contract on the dynalite emulator: the store under test talks to it through the kit's fault
 * proxy, with the SDK retrying (3 attempts of at most 400 ms each, 1 s per call), as an application would set it.
 */
class DynamoDbNetworkFaultOnDynaliteContractTest extends NetworkFaultContractTest {
    @BeforeAll
    static void createTheTable() {
        try (DynamoDbClient client = DynamoDbTestSupport.client(Duration.ofSeconds(10))) {
            DynamoDbDedupTables.create(client, DynamoDbTestSupport.TABLE);
        }
    }

    @Override
    protected InetSocketAddress server() {
        return DynamoDbTestSupport.address();
    }

    @Override
    protected DedupStore openStoreVia(String host, int port, String namespace) {
        String endpoint = "http://" + host + ":" + port;
        DynamoDbClient client = DynamoDbTestSupport.client(endpoint, Duration.ofMillis(400), operationTimeout(), 3);
        DynamoDbAsyncClient asyncClient = DynamoDbTestSupport.asyncClient(endpoint, Duration.ofMillis(400),
                operationTimeout(), 3);
        return DynamoDbDedupStore.builder(client, DynamoDbTestSupport.TABLE).namespace(namespace)
                .asyncClient(asyncClient)
                .onClose(() -> {
                    client.close();
                    asyncClient.close();
                })
                .build();
    }
}
