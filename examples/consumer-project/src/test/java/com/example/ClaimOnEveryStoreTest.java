package com.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * All five stores in one application that took dedup only through dedup-bom: each opens by URI and claims, one key
 * at a time and in a batch (the DynamoDB batch runs on the AWS SDK's Netty client, the Redis store on Lettuce's:
 * one Netty must serve both). The servers are the harness's (scripts/test-servers.sh: MariaDB serves the MySQL
 * store); MongoDB is an emulator.
 */
class ClaimOnEveryStoreTest {
    private static final String NAMESPACE = "consumer-" + UUID.randomUUID().toString().substring(0, 8);
    private static MongoServer mongo;

    @BeforeAll
    static void startMongoEmulator() {
        mongo = new MongoServer(new MemoryBackend());
        mongo.bind("127.0.0.1", 0);
    }

    @AfterAll
    static void stopMongoEmulator() {
        mongo.shutdownNow();
    }

    private static String server(String variable) {
        String url = System.getenv(variable);
        if (url == null || url.isBlank()) {
            throw new IllegalStateException(variable + " is not set: start the servers with"
                    + " eval \"$(bash scripts/test-servers.sh up)\"");
        }
        return url;
    }

    @Test
    void postgresql() {
        claimsOn(server("DEDUP_TEST_POSTGRES_URL") + "&table=consumer_project&createSchema=true&namespace="
                + NAMESPACE);
    }

    @Test
    void mariadb() {
        String jdbc = server("DEDUP_TEST_MARIADB_URL");
        claimsOn(jdbc + (jdbc.contains("?") ? "&" : "?") + "table=consumer_project&createSchema=true&namespace="
                + NAMESPACE);
    }

    @Test
    void redis() {
        claimsOn(server("DEDUP_TEST_REDIS_URL") + "?namespace=" + NAMESPACE);
    }

    @Test
    void dynamodb() {
        claimsOn("dynamodb://consumer_project?endpoint=" + server("DEDUP_TEST_DYNAMODB_URL")
                + "&createTable=true&accessKeyId=local&secretAccessKey=local&namespace=" + NAMESPACE);
    }

    @Test
    void mongodb() {
        claimsOn("mongodb://127.0.0.1:" + mongo.getLocalAddress().getPort() + "/consumer?createIndexes=true"
                + "&namespace=" + NAMESPACE);
    }

    private static void claimsOn(String uri) {
        try (DedupStore store = DedupStores.open(uri)) {
            String key = UUID.randomUUID().toString();
            assertInstanceOf(Claim.class, store.claim(key, Duration.ofMinutes(1)));
            assertInstanceOf(Duplicate.class, store.claim(key, Duration.ofMinutes(1)));

            List<ClaimResult> batch = store.claimAll(List.of(key, UUID.randomUUID().toString(),
                    UUID.randomUUID().toString()), Duration.ofMinutes(1));
            assertEquals(3, batch.size());
            assertInstanceOf(Duplicate.class, batch.get(0));
            assertInstanceOf(Claim.class, batch.get(1));
            assertInstanceOf(Claim.class, batch.get(2));
        }
    }
}
