package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.tck.BlockingOverAsync;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * settleAll on mongo-java-server 1.47.0 in-process (or DEDUP_TEST_MONGO_URL), through the blocking store and through
 * its native {@code async()} view: the answers, what each key ends as, and the commands each batch sends. Expiry is
 * crossed with a {@link TestClock}.
 */
class MongoSettleAllOnMongoJavaServerTest {
    private static final String DATABASE = "dedup_settle_all";
    private static final Duration LEASE = Duration.ofMinutes(1);
    private static final Duration RETENTION = Duration.ofDays(1);

    private static MongoTestServer server;
    private static MongoClient client;
    private static com.mongodb.reactivestreams.client.MongoClient reactiveClient;
    private static final Queue<String> commands = new ConcurrentLinkedQueue<>();

    private TestClock clock;
    private String namespace;
    private MongoDedupStore store;
    private MongoDedupStore other;

    @BeforeAll
    static void startServer() {
        server = MongoTestServer.start();
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(server.url()))
                .addCommandListener(new CommandListener() {
                    @Override
                    public void commandStarted(CommandStartedEvent event) {
                        if (DATABASE.equals(event.getDatabaseName())) {
                            commands.add(event.getCommandName());
                        }
                    }
                })
                .build();
        client = MongoClients.create(settings);
        reactiveClient = com.mongodb.reactivestreams.client.MongoClients.create(settings);
        MongoDedupStore.builder(client, DATABASE).validateIndexes(false).build().createIndexes();
    }

    @AfterAll
    static void stopServer() {
        reactiveClient.close();
        client.close();
        server.close();
    }

    @BeforeEach
    void openStores() {
        clock = new TestClock(Instant.parse("2030-01-01T00:00:00Z"));
        namespace = "settle-" + UUID.randomUUID().toString().substring(0, 8);
        store = MongoDedupStore.builder(client, DATABASE).reactive(reactiveClient).namespace(namespace).clock(clock)
                .build();
        other = MongoDedupStore.builder(client, DATABASE).namespace(namespace).clock(clock).build();
    }

    /** The store under test: itself, or every call made through its native async view. */
    private DedupStore view(String path) {
        return path.equals("async") ? BlockingOverAsync.of(store) : store;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"blocking", "async"})
    @DisplayName("a mixed batch answers in input order, each key ends as asked with its own result, in 2 commands")
    void mixedBatch(String path) {
        DedupStore settling = view(path);
        Claim first = claim("first");
        Claim second = claim("second");
        Claim failed = claim("failed");
        Claim released = claim("released");
        commands.clear();

        List<Boolean> answers = settling.settleAll(List.of(
                Settlement.complete(first, RETENTION, bytes("result of first")),
                Settlement.fail(failed, RETENTION, bytes("error of failed")),
                Settlement.release(released),
                Settlement.complete(second, Duration.ofHours(2), bytes("result of second"))));

        assertThat(answers).containsExactly(true, true, true, true);
        assertThat(sentCommands()).as("one bulk update, one bulk delete of the released").containsExactly("update",
                "delete");
        assertRecord("first", RecordState.COMPLETED, first.owner(), "result of first", RETENTION);
        assertRecord("failed", RecordState.FAILED, failed.owner(), "error of failed", RETENTION);
        assertRecord("second", RecordState.COMPLETED, second.owner(), "result of second", Duration.ofHours(2));
        assertThat(other.inspect("released")).isEmpty();
        assertThat(raw().find(new BsonDocument("_id", new BsonString(other.documentId("released"))))
                .first()).as("the released document is deleted, not left to the TTL index").isNull();
        assertThat(other.claim("released", LEASE)).as("claimable at once").isInstanceOf(Claim.class);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"blocking", "async"})
    @DisplayName("a batch without a release is one command")
    void batchWithoutReleaseIsOneCommand(String path) {
        Claim a = claim("a");
        Claim b = claim("b");
        commands.clear();

        assertThat(view(path).settleAll(List.of(Settlement.complete(a, RETENTION, null),
                Settlement.fail(b, RETENTION, null)))).containsExactly(true, true);

        assertThat(sentCommands()).containsExactly("update");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"blocking", "async"})
    @DisplayName("a claim taken over after its lease lapsed answers false; the new owner's record is untouched")
    void takenOverClaimAnswersFalse(String path) {
        Claim lapsed = claim("taken");
        Claim kept = claim("kept", Duration.ofHours(1));
        clock.advance(LEASE.plusSeconds(1));
        Claim newOwner = (Claim) other.claim("taken", LEASE);
        KeyRecord before = other.inspect("taken").orElseThrow();
        commands.clear();

        List<Boolean> answers = view(path).settleAll(List.of(
                Settlement.complete(lapsed, RETENTION, bytes("stale result")),
                Settlement.complete(kept, RETENTION, bytes("kept result"))));

        assertThat(answers).containsExactly(false, true);
        assertThat(sentCommands()).as("the bulk matched 1 of 2: one read tells which").containsExactly("update",
                "find");
        KeyRecord after = other.inspect("taken").orElseThrow();
        assertThat(after).isEqualTo(before);
        assertThat(after.owner()).isEqualTo(newOwner.owner());
        assertThat(after.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(after.result()).isNull();
        assertRecord("kept", RecordState.COMPLETED, kept.owner(), "kept result", RETENTION);
        assertThat(other.release(newOwner)).as("still the new owner's claim").isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"blocking", "async"})
    @DisplayName("a batch with stale settlements gives the exact answer of each, and writes nothing for the stale")
    void staleSettlementsAnswerExactly(String path) {
        Claim fresh = claim("fresh");
        Claim lapsed = claim("lapsed");
        Claim forgotten = claim("forgotten");
        Claim releasable = claim("releasable", Duration.ofHours(1));
        Claim done = claim("done", Duration.ofHours(1));
        Claim valid = claim("valid", Duration.ofHours(1));
        Claim failing = claim("failing", Duration.ofHours(1));
        assertThat(store.complete(done, RETENTION, bytes("done before"))).isTrue();
        assertThat(other.forget("forgotten")).isTrue();
        clock.advance(LEASE.plusSeconds(1)); // "fresh", "lapsed" and "forgotten" had a one-minute lease
        Claim retaken = (Claim) other.claim("fresh", LEASE);
        commands.clear();

        List<Boolean> answers = view(path).settleAll(List.of(
                Settlement.complete(fresh, RETENTION, bytes("x")),
                Settlement.release(lapsed),
                Settlement.complete(valid, RETENTION, bytes("valid result")),
                Settlement.fail(forgotten, RETENTION, bytes("y")),
                Settlement.release(releasable),
                Settlement.complete(done, RETENTION, bytes("twice")),
                Settlement.fail(failing, RETENTION, bytes("failing error"))));

        assertThat(answers).containsExactly(false, false, true, false, true, false, true);
        assertThat(sentCommands()).containsExactly("update", "find", "delete");
        assertThat(other.inspect("fresh").orElseThrow().owner()).isEqualTo(retaken.owner());
        assertThat(other.inspect("lapsed")).as("lapsed, not released: absent by expiry").isEmpty();
        assertThat(raw().find(new BsonDocument("_id", new BsonString(other.documentId("lapsed")))).first())
                .as("the lapsed claim's document was left alone").isNotNull();
        assertRecord("valid", RecordState.COMPLETED, valid.owner(), "valid result", RETENTION);
        assertThat(other.inspect("forgotten")).isEmpty();
        assertThat(other.claim("releasable", LEASE)).isInstanceOf(Claim.class);
        assertThat(other.inspect("done").orElseThrow().result()).isEqualTo(bytes("done before"));
        assertRecord("failing", RecordState.FAILED, failing.owner(), "failing error", RETENTION);
    }

    private Claim claim(String key) {
        return claim(key, LEASE);
    }

    private Claim claim(String key, Duration lease) {
        return (Claim) store.claim(key, lease);
    }

    private void assertRecord(String key, RecordState state, String owner, String result, Duration retention) {
        KeyRecord record = other.inspect(key).orElseThrow();
        assertThat(record.state()).as(key).isEqualTo(state);
        assertThat(record.owner()).as(key).isEqualTo(owner);
        assertThat(record.result()).as(key).isEqualTo(bytes(result));
        assertThat(record.expiresAt()).as(key).isEqualTo(clock.instant().plus(retention));
    }

    private List<String> sentCommands() {
        List<String> sent = List.copyOf(commands);
        commands.clear();
        return sent;
    }

    private MongoCollection<BsonDocument> raw() {
        return client.getDatabase(DATABASE).getCollection(store.collectionNamespace().getCollectionName(),
                BsonDocument.class);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
