package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.dedup.Claim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What mongo-java-server cannot show: a real mongod's TTL monitor deleting expired dedup documents through the index
 * {@link MongoDedupStore#createIndexes()} makes. Tagged docker: runs only with {@code mvn -Pdocker test}.
 */
@Tag("docker")
class MongoTtlIndexOnMongo7Test {
    private static MongoClient client;

    @BeforeAll
    static void connect() {
        client = MongoClients.create(RealMongod.url());
    }

    @AfterAll
    static void disconnect() {
        if (client != null) {
            client.close();
        }
    }

    @Test
    @DisplayName("the TTL index deletes expired claims and completed records, and leaves live ones")
    void ttlMonitorDeletesExpiredDocuments() throws Exception {
        boolean fastMonitor = true;
        try {
            // The monitor runs every 60 s by default; once a second keeps the test short where the server allows it.
            client.getDatabase("admin").runCommand(new Document("setParameter", 1).append("ttlMonitorSleepSecs", 1));
        } catch (MongoCommandException refused) {
            fastMonitor = false;
        }
        MongoDatabase database = client.getDatabase("dedup_ttl");
        String collection = "ttl_" + UUID.randomUUID().toString().substring(0, 8);
        MongoDedupStore store = MongoDedupStore.builder(database).collection(collection).namespace("ttl")
                .validateIndexes(false).build();
        store.createIndexes();
        store.validateIndexes();

        List<String> live = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            assertThat(store.claim("expiring-" + i, Duration.ofMillis(200))).isInstanceOf(Claim.class);
            Claim done = (Claim) store.claim("completed-" + i, Duration.ofMinutes(5));
            assertThat(store.complete(done, Duration.ofMillis(200), new byte[] {1})).isTrue();
            assertThat(store.claim("live-" + i, Duration.ofMinutes(10))).isInstanceOf(Claim.class);
            live.add("ttl:live-" + i);
        }
        MongoCollection<Document> documents = database.getCollection(collection);

        long started = System.nanoTime();
        long deadline = started + TimeUnit.SECONDS.toNanos(fastMonitor ? 30 : 150);
        while (documents.countDocuments() > live.size() && System.nanoTime() < deadline) {
            Thread.sleep(250);
        }

        List<String> remaining = new ArrayList<>();
        documents.find().forEach(document -> remaining.add(document.getString("_id")));
        assertThat(remaining).containsExactlyInAnyOrderElementsOf(live);
        System.out.printf("mongod TTL monitor (ttlMonitorSleepSecs %s) deleted 40 expired documents within %d ms%n",
                fastMonitor ? "1" : "default 60", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }
}
