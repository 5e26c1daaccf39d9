package dev.dedup.examples.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.dedup.tck.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The demo with the store URIs a user would pass as {@code -Ddemo.store=...}, on the real servers (MongoDB on its
 * in-process emulator, since no mongod runs here): every store on the demo's class path, every run exact.
 */
class InventoryDemoOnEveryStoreTest {
    private static MongoServer mongoEmulator;

    @BeforeAll
    static void startMongoEmulator() {
        mongoEmulator = new MongoServer(new MemoryBackend());
        mongoEmulator.bind("127.0.0.1", 0);
    }

    @AfterAll
    static void stopMongoEmulator() {
        mongoEmulator.shutdownNow();
    }

    private static void exactOn(String storeUri) {
        DemoResult result = InventoryDemo.run(DemoConfig.fromArgs(storeUri, "--seed=3", "--messages=300"));

        assertThat(result.idempotent().exact()).as("idempotent consumer on " + storeUri).isTrue();
        assertThat(result.outcomes().processed()).isEqualTo(result.uniqueMessages());
        assertThat(result.exitCode()).isZero();
    }

    @Test
    @DisplayName("postgresql:// runs the demo exactly")
    void postgresql() {
        exactOn(TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null)
                + "&table=demo_inventory&createSchema=true");
    }

    @Test
    @DisplayName("redis:// runs the demo exactly")
    void redis() {
        exactOn(TestServers.require("Redis 7", "DEDUP_TEST_REDIS_URL", null));
    }

    @Test
    @DisplayName("dynamodb:// runs the demo exactly (on dynalite)")
    void dynamodbOnDynalite() {
        exactOn("dynamodb://demo_inventory?endpoint="
                + TestServers.require("DynamoDB emulator (dynalite)", "DEDUP_TEST_DYNAMODB_URL", null)
                + "&createTable=true&accessKeyId=local&secretAccessKey=local");
    }

    @Test
    @DisplayName("mongodb:// runs the demo exactly (on mongo-java-server)")
    void mongodbOnMongoJavaServer() {
        exactOn("mongodb://127.0.0.1:" + mongoEmulator.getLocalAddress().getPort() + "/demo?createIndexes=true");
    }
}
