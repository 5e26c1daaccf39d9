package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import dev.dedup.Claim;
import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TTL index set-up and the start-up check, against mongo-java-server 1.47.0 in-process (no real mongod can run
 * here). That server accepts and lists TTL indexes but never deletes by them; real deletion is checked by
 * {@link MongoTtlIndexOnMongo7Test} (profile docker).
 */
class MongoIndexesOnMongoJavaServerTest {
    private static final String DATABASE = "dedup_indexes";

    private static MongoTestServer server;
    private static MongoClient client;
    private static MongoDatabase database;

    @BeforeAll
    static void startServer() {
        server = MongoTestServer.start();
        client = MongoClients.create(server.url());
        database = client.getDatabase(DATABASE);
    }

    @AfterAll
    static void stopServer() {
        client.close();
        server.close();
    }

    private static String freshCollection() {
        return "indexes_" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static List<Document> indexesOn(String collection, String field) {
        List<Document> found = new ArrayList<>();
        for (Document index : database.getCollection(collection).listIndexes()) {
            if (index.get("key", Document.class).containsKey(field)) {
                found.add(index);
            }
        }
        return found;
    }

    private static String mongoshCreate(String collection) {
        return "db.getSiblingDB(\"" + DATABASE + "\").getCollection(\"" + collection
                + "\").createIndex({expiresAt: 1}, {expireAfterSeconds: 0})";
    }

    @Test
    @DisplayName("createIndexes creates the TTL index (expireAfterSeconds 0) once, however often it runs")
    void createIndexesIsIdempotent() {
        String collection = freshCollection();
        MongoDedupStore store = MongoDedupStore.builder(database).collection(collection).validateIndexes(false).build();

        store.createIndexes();
        store.createIndexes();
        try (DedupStore byUri = DedupStores.open(server.url() + "/?database=" + DATABASE + "&collection=" + collection
                + "&createIndexes=true")) {
            assertThat(byUri.claim("k", Duration.ofSeconds(5))).isInstanceOf(Claim.class);
        }

        List<Document> ttl = indexesOn(collection, "expiresAt");
        assertThat(ttl).hasSize(1);
        assertThat(ttl.get(0).getString("name")).isEqualTo("expiresAt_1");
        assertThat(ttl.get(0).get("key", Document.class)).isEqualTo(new Document("expiresAt", 1));
        assertThat(((Number) ttl.get(0).get("expireAfterSeconds")).longValue()).isZero();
        assertThat(indexesOn(collection, "_id")).hasSize(1);
        store.validateIndexes();
        MongoDedupStore.builder(database).collection(collection).build(); // validates
    }

    @Test
    @DisplayName("a missing TTL index fails build() with createIndexes() and the mongosh command that fix it")
    void missingIndexFailsWithTheFix() {
        String absent = freshCollection();
        assertThatThrownBy(() -> MongoDedupStore.builder(database).collection(absent).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("dedup collection " + DATABASE + "." + absent + " has no TTL index on expiresAt")
                .hasMessageContaining("MongoDedupStore.createIndexes()")
                .hasMessageContaining(mongoshCreate(absent))
                .hasMessageContaining("validateIndexes(false)");

        String withData = freshCollection();
        database.getCollection(withData).insertOne(new Document("_id", "other"));
        assertThatThrownBy(() -> MongoDedupStore.builder(database).collection(withData).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining(mongoshCreate(withData));
        assertThatThrownBy(() -> DedupStores.open(server.url() + "/?database=" + DATABASE + "&collection=" + withData))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("has no TTL index on expiresAt");
    }

    @Test
    @DisplayName("a TTL index with another expireAfterSeconds fails with the collMod that fixes it, and is left alone")
    void differentTtlFailsWithTheFix() {
        String collection = freshCollection();
        database.getCollection(collection).createIndex(Indexes.ascending("expiresAt"),
                new IndexOptions().expireAfter(3600L, TimeUnit.SECONDS));
        MongoDedupStore unchecked = MongoDedupStore.builder(database).collection(collection).validateIndexes(false)
                .build();

        assertThatThrownBy(() -> MongoDedupStore.builder(database).collection(collection).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("has an index on expiresAt that is not the TTL index dedup needs")
                .hasMessageContaining("\"expireAfterSeconds\": 3600")
                .hasMessageContaining("db.getSiblingDB(\"" + DATABASE + "\").runCommand({collMod: \"" + collection
                        + "\", index: {name: \"expiresAt_1\", expireAfterSeconds: 0}})");
        assertThatThrownBy(unchecked::createIndexes)
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("\"expireAfterSeconds\": 3600");

        List<Document> ttl = indexesOn(collection, "expiresAt");
        assertThat(ttl).hasSize(1);
        assertThat(((Number) ttl.get(0).get("expireAfterSeconds")).longValue()).isEqualTo(3600);
    }

    @Test
    @DisplayName("a plain index on expiresAt is reported as not a TTL index, with the drop-and-create fix")
    void plainIndexFailsWithTheFix() {
        String collection = freshCollection();
        database.getCollection(collection).createIndex(Indexes.ascending("expiresAt"));

        assertThatThrownBy(() -> MongoDedupStore.builder(database).collection(collection).build())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("(not a TTL index)")
                .hasMessageContaining(".dropIndex(\"expiresAt_1\")")
                .hasMessageContaining(mongoshCreate(collection));
    }

    @Test
    @DisplayName("an equivalent TTL index under another name is accepted, and createIndexes adds none")
    void equivalentIndexUnderAnotherNameIsAccepted() {
        String collection = freshCollection();
        database.getCollection(collection).createIndex(Indexes.descending("expiresAt"),
                new IndexOptions().name("my_ttl").expireAfter(0L, TimeUnit.SECONDS));

        MongoDedupStore store = MongoDedupStore.builder(database).collection(collection).build();
        store.createIndexes();

        assertThat(indexesOn(collection, "expiresAt")).extracting(index -> index.getString("name"))
                .containsExactly("my_ttl");
    }

    @Test
    @DisplayName("validateIndexes(false) skips the check; claims still enforce expiry without the index")
    void checkCanBeSkipped() {
        String collection = freshCollection();
        TestClock clock = new TestClock(java.time.Instant.parse("2030-01-01T00:00:00Z"));
        MongoDedupStore store = MongoDedupStore.builder(database).collection(collection).validateIndexes(false)
                .clock(clock).build();

        Claim first = (Claim) store.claim("k", Duration.ofSeconds(30));
        clock.advance(Duration.ofSeconds(31));

        assertThat(store.claim("k", Duration.ofSeconds(30))).isInstanceOf(Claim.class)
                .extracting(result -> ((Claim) result).owner()).isNotEqualTo(first.owner());
    }

    @Test
    @DisplayName("a collection collation on _id is refused: keys must compare byte for byte")
    void collationIsRefused() {
        MongoNamespace namespace = new MongoNamespace(DATABASE, "with_collation");
        List<BsonDocument> listed = List.of(
                BsonDocument.parse("{v: 2, key: {_id: 1}, name: '_id_', collation: {locale: 'en', strength: 2}}"),
                BsonDocument.parse("{v: 2, key: {expiresAt: 1}, name: 'expiresAt_1', expireAfterSeconds: 0}"));

        assertThat(MongoIndexes.check(listed, namespace)).hasValueSatisfying(problem -> {
            assertThat(problem.missing()).isFalse();
            assertThat(problem.message()).contains("has a default collation").contains("\"locale\": \"en\"");
        });
        List<BsonDocument> simple = List.of(
                BsonDocument.parse("{v: 2, key: {_id: 1}, name: '_id_', collation: {locale: 'simple'}}"),
                BsonDocument.parse("{v: 2, key: {expiresAt: 1}, name: 'expiresAt_1', expireAfterSeconds: 0}"));
        assertThat(MongoIndexes.check(simple, namespace)).isEmpty();
        List<BsonDocument> partial = List.of(BsonDocument.parse("{v: 2, key: {expiresAt: 1}, name: 'expiresAt_1',"
                + " expireAfterSeconds: 0, partialFilterExpression: {state: 'COMPLETED'}}"));
        assertThat(MongoIndexes.check(partial, namespace)).hasValueSatisfying(problem ->
                assertThat(problem.message()).contains("partialFilterExpression").contains(".dropIndex(\"expiresAt_1\")"));
    }
}
