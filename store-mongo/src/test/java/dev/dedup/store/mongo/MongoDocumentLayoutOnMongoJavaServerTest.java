package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoClientSettings;
import com.mongodb.ConnectionString;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupConfigurationException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What the store leaves in MongoDB and which commands each operation sends, against mongo-java-server 1.47.0
 * in-process (no real mongod can run here). Expiry is crossed with a {@link TestClock}, so no test waits.
 */
class MongoDocumentLayoutOnMongoJavaServerTest {
    private static final String DATABASE = "dedup_layout";
    private static final Instant START = Instant.parse("2030-01-01T00:00:00Z");

    private static MongoTestServer server;
    private static MongoClient client;
    private static MongoDatabase database;
    private static final Queue<String> commands = new ConcurrentLinkedQueue<>();

    private TestClock clock;
    private MongoDedupStore store;
    private MongoCollection<BsonDocument> raw;

    @BeforeAll
    static void startServer() {
        server = MongoTestServer.start();
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(server.url()))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (DATABASE.equals(event.getDatabaseName())) {
                            commands.add(event.getCommandName());
                        }
                    }
                })
                .build());
        database = client.getDatabase(DATABASE);
        MongoDedupStore.builder(database).validateIndexes(false).build().createIndexes();
    }

    @AfterAll
    static void stopServer() {
        client.close();
        server.close();
    }

    @BeforeEach
    void newStore() {
        clock = new TestClock(START);
        store = MongoDedupStore.builder(database).namespace("layout-" + UUID.randomUUID().toString().substring(0, 8))
                .clock(clock).build();
        raw = database.getCollection(MongoDedupStore.DEFAULT_COLLECTION, BsonDocument.class);
        commands.clear();
    }

    private BsonDocument stored(String key) {
        return raw.find(new BsonDocument("_id", new BsonString(store.namespace() + ":" + key))).first();
    }

    /** The commands the store sent since the last call, then forgets them. */
    private static List<String> sent() {
        List<String> names = List.copyOf(commands);
        commands.clear();
        return names;
    }

    @Test
    @DisplayName("a claim inserts {_id: namespace:key, owner, state, expiresAt, createdAt} with BSON dates, in one insert")
    void claimInsertsOneDocument() {
        Claim claim = (Claim) store.claim("order-1", Duration.ofSeconds(30));
        assertThat(sent()).containsExactly("insert");

        BsonDocument document = stored("order-1");
        assertThat(store.documentId("order-1")).isEqualTo(store.namespace() + ":order-1");
        assertThat(document.keySet()).containsExactly("_id", "owner", "state", "expiresAt", "createdAt");
        assertThat(document.getString("_id").getValue()).isEqualTo(store.namespace() + ":order-1");
        assertThat(document.getString("owner").getValue()).isEqualTo(claim.owner()).hasSize(36);
        assertThat(document.getString("state").getValue()).isEqualTo("IN_PROGRESS");
        assertThat(document.getDateTime("expiresAt").getValue()).isEqualTo(START.plusSeconds(30).toEpochMilli());
        assertThat(document.getDateTime("createdAt").getValue()).isEqualTo(START.toEpochMilli());
        assertThat(claim.expiresAt()).isEqualTo(START.plusSeconds(30));
    }

    @Test
    @DisplayName("a fingerprint is a binary field: inserted with the claim, kept by complete, set or unset by a take-over")
    void fingerprintField() {
        Claim claim = (Claim) store.claim("printed", Duration.ofSeconds(30), new byte[] {5, 6});
        assertThat(stored("printed").getBinary("fingerprint").getData()).containsExactly(5, 6);
        assertThat(store.complete(claim, Duration.ofSeconds(30), null)).isTrue();
        assertThat(stored("printed").getBinary("fingerprint").getData()).containsExactly(5, 6);

        clock.advance(Duration.ofMinutes(1));
        store.claim("printed", Duration.ofSeconds(30), new byte[] {7});
        assertThat(stored("printed").getBinary("fingerprint").getData()).containsExactly(7);
        clock.advance(Duration.ofMinutes(1));
        store.claim("printed", Duration.ofSeconds(30));
        assertThat(stored("printed")).doesNotContainKey("fingerprint");
    }

    @Test
    @DisplayName("a live duplicate costs an insert that fails with 11000 and one find by _id; nothing is written")
    void duplicateIsInsertThenFind() {
        Claim claim = (Claim) store.claim("k", Duration.ofSeconds(30));
        BsonDocument before = stored("k");
        sent();

        Duplicate duplicate = (Duplicate) store.claim("k", Duration.ofMinutes(5));

        assertThat(sent()).containsExactly("insert", "find");
        assertThat(duplicate.expiresAt()).isEqualTo(claim.expiresAt());
        assertThat(stored("k")).isEqualTo(before);
    }

    @Test
    @DisplayName("complete sets state, expiry, completedAt and the binary result in one update; release deletes")
    void completeAndReleaseRewriteTheDocument() {
        Claim done = (Claim) store.claim("done", Duration.ofSeconds(30));
        Claim none = (Claim) store.claim("none", Duration.ofSeconds(30));
        Claim empty = (Claim) store.claim("empty", Duration.ofSeconds(30));
        Claim dropped = (Claim) store.claim("dropped", Duration.ofSeconds(30));
        clock.advance(Duration.ofSeconds(1));
        sent();

        assertThat(store.complete(done, Duration.ofHours(2), new byte[] {42, 0, -1})).isTrue();
        assertThat(sent()).containsExactly("update");
        assertThat(store.complete(none, Duration.ofHours(2), null)).isTrue();
        assertThat(store.complete(empty, Duration.ofHours(2), new byte[0])).isTrue();
        assertThat(store.release(dropped)).isTrue();
        assertThat(sent()).containsExactly("update", "update", "delete");

        BsonDocument document = stored("done");
        assertThat(document.keySet()).containsExactly("_id", "owner", "state", "expiresAt", "createdAt",
                "completedAt", "result");
        assertThat(document.getString("state").getValue()).isEqualTo("COMPLETED");
        assertThat(document.getDateTime("expiresAt").getValue())
                .isEqualTo(START.plusSeconds(1).plus(Duration.ofHours(2)).toEpochMilli());
        assertThat(document.getDateTime("completedAt").getValue()).isEqualTo(START.plusSeconds(1).toEpochMilli());
        assertThat(document.getDateTime("createdAt").getValue()).isEqualTo(START.toEpochMilli());
        assertThat(document.getBinary("result").getType()).isEqualTo(BsonBinarySubType.BINARY.getValue());
        assertThat(document.getBinary("result").getData()).containsExactly(42, 0, -1);
        assertThat(stored("none").containsKey("result")).isFalse();
        assertThat(stored("empty").getBinary("result").getData()).isEmpty();
        assertThat(stored("dropped")).isNull();
    }

    @Test
    @DisplayName("extend moves expiresAt in one update and changes nothing else")
    void extendMovesTheExpiry() {
        Claim claim = (Claim) store.claim("k", Duration.ofSeconds(30));
        BsonDocument before = stored("k");
        clock.advance(Duration.ofSeconds(10));
        sent();

        assertThat(store.extend(claim, Duration.ofMinutes(1))).isTrue();

        assertThat(sent()).containsExactly("update");
        BsonDocument after = stored("k");
        assertThat(after.getDateTime("expiresAt").getValue()).isEqualTo(START.plusSeconds(70).toEpochMilli());
        after.put("expiresAt", before.get("expiresAt"));
        assertThat(after).isEqualTo(before);
    }

    @Test
    @DisplayName("an expired document is still physically there when it is taken over, in one conditional update")
    void expiredDocumentIsTakenOverInPlace() {
        Claim stale = (Claim) store.claim("k", Duration.ofMinutes(1));
        Claim completed = (Claim) store.claim("c", Duration.ofMinutes(1));
        assertThat(store.complete(completed, Duration.ofMinutes(2), new byte[] {7})).isTrue();
        clock.advance(Duration.ofMinutes(3));

        // The test server never deletes by TTL (a real mongod would, within about a minute of expiry).
        assertThat(stored("k").getString("owner").getValue()).isEqualTo(stale.owner());
        assertThat(stored("c").getString("state").getValue()).isEqualTo("COMPLETED");
        sent();

        Claim current = (Claim) store.claim("k", Duration.ofMinutes(1));
        assertThat(sent()).containsExactly("insert", "find", "update");
        Claim again = (Claim) store.claim("c", Duration.ofMinutes(1));

        BsonDocument taken = stored("k");
        assertThat(taken.getString("owner").getValue()).isEqualTo(current.owner()).isNotEqualTo(stale.owner());
        assertThat(taken.getDateTime("expiresAt").getValue()).isEqualTo(START.plusSeconds(240).toEpochMilli());
        assertThat(taken.getDateTime("createdAt").getValue()).isEqualTo(START.plusSeconds(180).toEpochMilli());
        assertThat(stored("c").keySet()).containsExactly("_id", "owner", "state", "expiresAt", "createdAt");
        assertThat(stored("c").getString("owner").getValue()).isEqualTo(again.owner());
        assertThat(raw.countDocuments(new BsonDocument("_id", new BsonString(store.documentId("k"))))).isEqualTo(1);
        assertThat(store.complete(stale, Duration.ofMinutes(1), null)).isFalse();
        assertThat(store.complete(current, Duration.ofMinutes(1), null)).isTrue();
    }

    @Test
    @DisplayName("claimAll is one unordered insertMany, plus one find by _id $in for the keys that exist")
    void claimAllIsOneInsertManyAndOneFind() {
        Claim live = (Claim) store.claim("live", Duration.ofMinutes(5));
        store.claim("expired", Duration.ofMinutes(1));
        clock.advance(Duration.ofMinutes(2));
        sent();

        List<ClaimResult> fresh = store.claimAll(List.of("a", "b", "a", "c"), Duration.ofMinutes(1));
        assertThat(sent()).containsExactly("insert");
        assertThat(fresh).extracting(ClaimResult::isClaimed).containsExactly(true, true, false, true);

        List<ClaimResult> mixed = store.claimAll(List.of("d", "live", "expired", "a"), Duration.ofMinutes(1));
        assertThat(sent()).containsExactly("insert", "find", "update");
        assertThat(mixed.get(0)).isInstanceOf(Claim.class);
        assertThat(((Duplicate) mixed.get(1)).expiresAt()).isEqualTo(live.expiresAt());
        assertThat(mixed.get(2)).isInstanceOf(Claim.class);
        assertThat(((Duplicate) mixed.get(3)).state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(raw.countDocuments(new BsonDocument("_id", new BsonDocument("$regex",
                new BsonString("^" + store.namespace() + ":"))))).isEqualTo(6);
    }

    @Test
    @DisplayName("the same key in two namespaces is two documents")
    void namespacesAreIdPrefixes() {
        MongoDedupStore other = MongoDedupStore.builder(database).namespace(store.namespace() + "-b").build();

        store.claim("k", Duration.ofMinutes(1));
        other.claim("k", Duration.ofMinutes(1));

        assertThat(stored("k")).isNotNull();
        assertThat(raw.find(new BsonDocument("_id", new BsonString(store.namespace() + "-b:k"))).first()).isNotNull();
    }

    @Test
    @DisplayName("claims are decided by the store's clock: a clock an hour ahead sees a 30-minute lease as expired")
    void theClientClockDecidesExpiry() {
        Claim claim = (Claim) store.claim("k", Duration.ofMinutes(30));
        TestClock ahead = new TestClock(START.plus(Duration.ofHours(1)));
        MongoDedupStore skewed = MongoDedupStore.builder(database).namespace(store.namespace()).clock(ahead).build();

        assertThat(skewed.claim("k", Duration.ofMinutes(30))).isInstanceOf(Claim.class);
        assertThat(store.complete(claim, Duration.ofMinutes(1), null)).isFalse();
    }

    @Test
    @DisplayName("a foreign document under a dedup _id is a configuration error, not a silent duplicate")
    void foreignDocumentsAreReported() {
        raw.insertOne(new BsonDocument("_id", new BsonString(store.documentId("taken")))
                .append("hello", new BsonString("world")));

        assertThatThrownBy(() -> store.claim("taken", Duration.ofSeconds(5)))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("not a dedup record")
                .hasMessageContaining("owner");
        assertThatThrownBy(() -> store.claimAll(List.of("free", "taken"), Duration.ofSeconds(5)))
                .isInstanceOf(DedupConfigurationException.class);
    }

    @Test
    @DisplayName("an unacknowledged write concern on the application's database is not used: duplicates still show")
    void unacknowledgedWritesAreNotUsed() {
        MongoDedupStore onW0 = MongoDedupStore.builder(database.withWriteConcern(WriteConcern.UNACKNOWLEDGED))
                .namespace(store.namespace()).build();

        assertThat(onW0.claim("k", Duration.ofMinutes(1))).isInstanceOf(Claim.class);
        assertThat(onW0.claim("k", Duration.ofMinutes(1))).isInstanceOf(Duplicate.class);
        assertThatThrownBy(() -> MongoDedupStore.builder(database).writeConcern(WriteConcern.UNACKNOWLEDGED))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("acknowledged");
    }

    @Test
    @DisplayName("builder settings are checked at once, naming the value")
    void builderChecksItsSettings() {
        MongoDedupStore.Builder builder = MongoDedupStore.builder(database);
        assertThatThrownBy(() -> builder.collection("system.profile")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'system.profile'");
        assertThatThrownBy(() -> builder.collection("a$b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'a$b'");
        assertThatThrownBy(() -> builder.collection("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.namespace("a:b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'a:b'");
        assertThatThrownBy(() -> builder.timeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT0S");
        assertThatThrownBy(() -> builder.clock(null)).isInstanceOf(NullPointerException.class);
    }
}
