package dev.dedup.store.mongo;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertManyOptions;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import dev.dedup.spi.ContentionRetry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.bson.BsonDocument;

/**
 * A {@link dev.dedup.DedupStore} on MongoDB through the official sync driver. One document per key, keyed by a
 * unique {@code _id} of {@code namespace:key} (layout in {@link MongoRecord}).
 *
 * <p><b>A claim is insert-first.</b> It inserts a fresh document: a new key is one {@code insertOne}, one round trip,
 * and the unique {@code _id} makes exactly one concurrent insert win. A duplicate-key error (code 11000, told by
 * {@link ErrorCategory#DUPLICATE_KEY}, never by message text) means the key exists; the store reads it and, while it
 * is live, reports it as a {@link Duplicate} with its state, expiry and result. An expired document is taken over
 * with one conditional update whose filter names the {@code _id}, the owner it read and {@code expiresAt <= now}:
 * the first racer's update changes the owner, so every other racer's filter matches nothing and exactly one wins.
 * A write the store loses to a concurrent one (the document vanished, or another racer took it over) is retried,
 * after a tiny jittered pause, until the claim is decided or the store's timeout passes; each retry means another
 * writer made progress.
 *
 * <p><b>Lost replies.</b> An operation whose connection breaks under it runs once more ({@link MongoRetryOnce}): a
 * claim that finds a live document with its own owner token is the caller's claim, not a duplicate, and a retried
 * complete, fail, extend or release that matches nothing succeeded iff the document shows exactly what it asked for
 * under the caller's owner (or, for release, is gone).
 *
 * <p>Why not one upsert with the expiry in its filter: on a real {@code mongod} that is one round trip too, but a
 * live key then fails with a duplicate-key error anyway, so the duplicate path still needs a read; and on the
 * wire-protocol test server such a filter scans the whole collection (60 times slower than an insert). Why not an
 * update pipeline with {@code $$NOW} (the server's clock): the test server cannot run update pipelines. So
 * <b>expiry instants come from the store's {@link Clock}</b>: keep the application servers' clocks NTP-synced and
 * leases much longer than their skew. Expiry is always enforced by the claim's own filter, never by deletion: the TTL
 * index ({@link #createIndexes()}) only cleans up, later.
 *
 * <p>{@code complete}, {@code release} and {@code extend} are single-document operations whose filter is
 * {@code {_id, owner, state: IN_PROGRESS, expiresAt > now}}, so a stale owner matches nothing. {@code claimAll} is
 * one unordered {@code insertMany}; the keys it reports as duplicates are read back with one {@code find} by
 * {@code _id $in}, and expired ones are taken over as above.
 *
 * <p><b>{@code settleAll} takes one to three round trips, whatever the batch's size</b> ({@link MongoSettleBatch}):
 * one unordered bulk write of an {@code updateOne} per settlement, under the filter of its single call, so each is
 * decided alone and atomically; a release ends the lease there. When the bulk matched fewer writes than settlements,
 * one {@code find} by {@code _id $in} tells which applied, by the batch's token each write leaves in
 * {@code settledBy}. When the batch released any claim, one bulk of {@code deleteOne} then deletes those documents.
 * (The driver splits a bulk write over 48 MB, such as 1,000 results of 256 KiB, into several commands.)
 *
 * <p><b>Non-blocking.</b> Given the reactive-streams driver's handle on the same database
 * ({@link Builder#reactive(com.mongodb.reactivestreams.client.MongoClient)}), {@link #async()} sends these same
 * operations through it and no thread waits for a reply; without one, {@code async()} throws
 * {@link UnsupportedOperationException} and {@link dev.dedup.AsyncDedupStore#onExecutor} runs the blocking calls.
 *
 * <pre>{@code
 * MongoDedupStore store = MongoDedupStore.builder(database).collection("dedup_claims").namespace("orders").build();
 * store.createIndexes();   // once, at deployment: the TTL index on expiresAt (idempotent)
 * }</pre>
 */
public final class MongoDedupStore extends AbstractDedupStore {
    /** The collection used when none is given. */
    public static final String DEFAULT_COLLECTION = "dedup_claims";

    /** Letters, digits, {@code _ - .}; never a system collection; well inside MongoDB's namespace length limit. */
    private static final Pattern COLLECTION = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9_.-]{0,119}");

    /** The least time {@link #createIndexes()} allows itself. */
    private static final Duration INDEX_BUILD_TIMEOUT = Duration.ofMinutes(1);

    /** A bulk write that runs every write whatever the others do: each settlement is decided alone. */
    static final BulkWriteOptions UNORDERED = new BulkWriteOptions().ordered(false);

    private final MongoCollection<BsonDocument> collection;
    private final MongoCommands commands;
    private final Duration timeout;
    private final Runnable onClose;
    private final AsyncBackend asyncBackend;

    private MongoDedupStore(Builder builder) {
        super(builder.namespace);
        WriteConcern writeConcern = builder.writeConcern != null ? builder.writeConcern
                : builder.database.getWriteConcern().isAcknowledged() ? builder.database.getWriteConcern()
                : WriteConcern.ACKNOWLEDGED;
        // Our own codecs, the primary, the latest local data and acknowledged writes, whatever the application set
        // on its database: a duplicate-key error must come back, and a duplicate must be read where it was written.
        this.collection = builder.database.getCollection(builder.collection, BsonDocument.class)
                .withCodecRegistry(MongoClientSettings.getDefaultCodecRegistry())
                .withReadPreference(ReadPreference.primary())
                .withReadConcern(ReadConcern.LOCAL)
                .withWriteConcern(writeConcern)
                .withTimeout(builder.timeout.toMillis(), TimeUnit.MILLISECONDS);
        this.commands = new MongoCommands(namespace(), collection.getNamespace().getFullName(), builder.clock);
        this.timeout = builder.timeout;
        this.onClose = builder.onClose;
        // Only touched when a reactive database was given: without the optional driver this class still loads.
        this.asyncBackend = builder.reactiveDatabase == null ? null
                : new MongoAsyncBackend(commands, timeout, builder.reactiveDatabase, collection);
    }

    /**
     * Starts a store on a database of the application's {@link MongoClient}; the client stays the caller's.
     *
     * @param database the database that holds the collection; its codecs, read preference and read concern are not
     *     used (the store sets its own)
     * @return a builder for collection {@code dedup_claims}, namespace {@code default} and a 5 s timeout
     */
    public static Builder builder(MongoDatabase database) {
        return new Builder(Objects.requireNonNull(database, "database"));
    }

    /**
     * Starts a store on {@code database} of the application's {@code client}; the client stays the caller's.
     *
     * @param client the application's client; the store never closes it
     * @param database the name of the database that holds the collection
     * @return a builder for collection {@code dedup_claims}, namespace {@code default} and a 5 s timeout
     */
    public static Builder builder(MongoClient client, String database) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(database, "database");
        return new Builder(client.getDatabase(database));
    }

    /** {@return the collection's full name, {@code database.collection}} */
    public MongoNamespace collectionNamespace() {
        return collection.getNamespace();
    }

    /**
     * Names the document that holds a dedup key, for inspecting records in the shell.
     *
     * @param key a dedup key, without namespace
     * @return the document's {@code _id}: {@code namespace:key}
     */
    public String documentId(String key) {
        return commands.documentId(key);
    }

    /**
     * Creates the TTL index on {@code expiresAt} ({@code expireAfterSeconds: 0}, named {@code expiresAt_1}) and the
     * collection with it, unless an equivalent index exists under any name. Idempotent: call it once at deployment
     * or at every start. A different index on {@code expiresAt} is never dropped: it fails with the fix.
     */
    public void createIndexes() {
        call("createIndexes", () -> {
            // Building an index on a populated collection takes longer than a claim: allow it a minute at least.
            long millis = Math.max(collection.getTimeout(TimeUnit.MILLISECONDS), INDEX_BUILD_TIMEOUT.toMillis());
            MongoIndexes.create(collection.withTimeout(millis, TimeUnit.MILLISECONDS));
            return null;
        });
    }

    /**
     * Checks that the TTL index exists as {@link #createIndexes()} makes it and that {@code _id} compares keys
     * byte-wise (no collection collation); a problem fails with {@link dev.dedup.DedupConfigurationException} saying
     * how to fix it. {@link Builder#build()} calls it unless {@link Builder#validateIndexes(boolean)} turned it off.
     */
    public void validateIndexes() {
        call("validateIndexes", () -> {
            MongoIndexes.validate(collection);
            return null;
        });
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        ContentionRetry retry = ContentionRetry.within(timeout);
        return call("claim", () -> MongoRetryOnce.run(collection, deadline(retry),
                (attempt, retried) -> claimOne(attempt, key, owner, lease, fingerprint, true, retry)));
    }

    /**
     * The claim loop: insert; on a duplicate key read the document; a live one is a duplicate (or this claim's own,
     * when an earlier try's reply was lost), an expired one is taken over. A step that loses to a concurrent writer
     * starts again until the claim is decided or the store's timeout passes. {@code insertFirst} is false when the
     * caller already knows the key exists. A batch passes a null {@code fingerprint}.
     */
    private ClaimResult claimOne(MongoCollection<BsonDocument> on, String key, String owner, Duration lease,
            byte[] fingerprint, boolean insertFirst, ContentionRetry retry) {
        boolean insert = insertFirst;
        while (true) {
            if (insert) {
                long now = commands.now();
                long expiresAt = now + lease.toMillis();
                try {
                    on.insertOne(MongoRecord.inProgress(documentId(key), owner, expiresAt, now, fingerprint));
                    return commands.claim(key, owner, expiresAt);
                } catch (MongoWriteException e) {
                    if (!MongoCommands.isDuplicateKey(e)) {
                        throw e;
                    }
                }
            }
            BsonDocument found = on.find(commands.byId(key)).first();
            if (found != null) {
                ClaimResult result = resolve(on, key, owner, lease, fingerprint, found);
                if (result != null) {
                    return result;
                }
            }
            // Released or deleted since (insert again), or taken over or extended by another writer (read again).
            insert = found == null;
            retry.pauseOrGiveUp(MongoErrors.STORE, commands.contendedClaim());
        }
    }

    /** The live document's outcome, else the take-over of the lapsed one; null when the take-over matched nothing. */
    private ClaimResult resolve(MongoCollection<BsonDocument> on, String key, String owner, Duration lease,
            byte[] fingerprint, BsonDocument found) {
        long now = commands.now();
        MongoRecord existing = commands.decode(found);
        ClaimResult live = commands.liveOutcome(key, owner, existing, now);
        if (live != null) {
            return live;
        }
        long expiresAt = now + lease.toMillis();
        boolean takenOver = on.updateOne(commands.lapsed(key, existing, now),
                MongoCommands.takeOver(owner, expiresAt, now, fingerprint)).getMatchedCount() == 1;
        return takenOver ? commands.claim(key, owner, expiresAt) : null;
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        // The batch inserts each distinct key once; repeats in the batch are duplicates of the first.
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        ContentionRetry retry = ContentionRetry.within(timeout);
        // Safe to run twice: a key the first try wrote comes back as a duplicate-key error carrying our own owner.
        Map<String, ClaimResult> byKey = call("claimAll", () -> MongoRetryOnce.run(collection, deadline(retry),
                (attempt, retried) -> claimBatch(attempt, ownerByKey, lease, retry)));
        return inInputOrder(keys, byKey);
    }

    private Map<String, ClaimResult> claimBatch(MongoCollection<BsonDocument> on, Map<String, String> ownerByKey,
            Duration lease, ContentionRetry retry) {
        long now = commands.now();
        long expiresAt = now + lease.toMillis();
        Set<Integer> taken = Set.of();
        try {
            on.insertMany(commands.batchDocuments(ownerByKey, expiresAt, now),
                    new InsertManyOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            taken = MongoCommands.duplicateKeys(e);
        }
        Map<String, ClaimResult> results = new HashMap<>();
        List<String> existing = commands.wonOrTaken(ownerByKey, taken, expiresAt, results);
        if (existing.isEmpty()) {
            return results;
        }
        Map<String, BsonDocument> found =
                MongoCommands.byDocumentId(on.find(in(MongoRecord.ID, commands.documentIds(existing))));
        for (String key : existing) {
            String owner = ownerByKey.get(key);
            BsonDocument document = found.get(documentId(key));
            ClaimResult result = document == null ? null : resolve(on, key, owner, lease, null, document);
            // Gone since the insert, or taken over by a racer: settle this key alone.
            results.put(key, result != null ? result
                    : claimOne(on, key, owner, lease, null, document == null, retry));
        }
        return results;
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        return ownerChecked(commands.finishing(claim, outcome, retention, result));
    }

    @Override
    protected boolean doRelease(Claim claim) {
        return ownerChecked(commands.releasing(claim));
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        return ownerChecked(commands.extending(claim, lease));
    }

    /** One owner-checked write, run again once after a broken connection ({@link MongoOwnedWrite}). */
    private boolean ownerChecked(MongoOwnedWrite write) {
        long deadline = System.nanoTime() + timeout.toNanos();
        return call(write.operation(), () -> MongoRetryOnce.run(collection, deadline, (on, retried) -> {
            boolean matched = write.isDelete() ? on.deleteOne(write.filter()).getDeletedCount() == 1
                    : on.updateOne(write.filter(), write.update()).getMatchedCount() == 1;
            if (matched || !retried) {
                return matched;
            }
            BsonDocument found = on.find(commands.byId(write.claim().key())).first();
            return write.appliedTo(found == null ? null : commands.decode(found));
        }));
    }

    @Override
    protected List<Boolean> doSettleAll(List<Settlement> settlements) {
        MongoSettleBatch batch = new MongoSettleBatch(commands, settlements);
        long deadline = System.nanoTime() + timeout.toNanos();
        // Safe to run twice: a write the first try applied carries the batch's token, which the read-back finds.
        return call("settleAll", () -> MongoRetryOnce.run(collection, deadline, (on, retried) -> {
            BulkWriteResult written = on.bulkWrite(batch.writes(), UNORDERED);
            List<Boolean> answers = batch.allApplied(written);
            if (answers == null) {
                answers = batch.answers(MongoCommands.byDocumentId(on.find(batch.documents())
                        .projection(batch.answerFields())), written.getMatchedCount(), retried);
            }
            List<DeleteOneModel<BsonDocument>> deletes = batch.releasedDeletes(answers);
            if (!deletes.isEmpty()) {
                on.bulkWrite(deletes, UNORDERED);
            }
            return answers;
        }));
    }

    @Override
    protected KeyRecord doInspect(String key) {
        long deadline = System.nanoTime() + timeout.toNanos();
        return commands.inspected(key, call("inspect", () -> MongoRetryOnce.run(collection, deadline,
                (on, retried) -> on.find(commands.byId(key)).first())));
    }

    @Override
    protected boolean doForget(String key) {
        BsonDocument live = commands.live(key);
        long deadline = System.nanoTime() + timeout.toNanos();
        return call("forget", () -> MongoRetryOnce.run(collection, deadline,
                (on, retried) -> on.deleteOne(live).getDeletedCount() == 1));
    }

    @Override
    protected AsyncBackend asyncBackend() {
        return asyncBackend;
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    static long deadline(ContentionRetry retry) {
        return System.nanoTime() + retry.remainingNanos();
    }

    private static <T> T call(String operation, Supplier<T> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            throw MongoErrors.translate(operation, e);
        }
    }

    /** Settings for a {@link MongoDedupStore}; each setter checks its value at once. */
    public static final class Builder {
        private final MongoDatabase database;
        private String collection = DEFAULT_COLLECTION;
        private String namespace = DedupLimits.DEFAULT_NAMESPACE;
        private Duration timeout = Duration.ofSeconds(5);
        private Clock clock = Clock.systemUTC();
        private WriteConcern writeConcern;
        private boolean validateIndexes = true;
        private Runnable onClose = () -> {};
        private com.mongodb.reactivestreams.client.MongoDatabase reactiveDatabase;

        private Builder(MongoDatabase database) {
            this.database = database;
        }

        /**
         * The collection (default {@code dedup_claims}); several namespaces may share one.
         *
         * @param collection 1 to 120 of {@code A-Z a-z 0-9 _ - .}, not starting with {@code .} or {@code system.},
         *     no empty part between dots
         * @return this builder
         * @throws IllegalArgumentException if {@code collection} does not match
         */
        public Builder collection(String collection) {
            if (collection == null || !COLLECTION.matcher(collection).matches() || collection.startsWith("system.")
                    || collection.endsWith(".") || collection.contains("..")) {
                throw new IllegalArgumentException("collection must be 1 to 120 of A-Z a-z 0-9 _ - . (not starting"
                        + " with '.' or 'system.', no empty part), but was "
                        + (collection == null ? "null" : "'" + collection + "'"));
            }
            this.collection = collection;
            return this;
        }

        /**
         * The namespace every key lives in (default {@code default}): the prefix of each document's {@code _id}.
         *
         * @param namespace 1 to 64 characters of {@code A-Z a-z 0-9 . _ -}
         * @return this builder
         * @throws IllegalArgumentException if {@code namespace} does not match
         */
        public Builder namespace(String namespace) {
            this.namespace = DedupLimits.checkNamespace(namespace);
            return this;
        }

        /**
         * How long one operation (one round trip: server selection, connection and reply included) may take before
         * it fails with a retryable {@link DedupStoreException} (default 5 s). Applied as the driver's client-side
         * operation timeout ({@code MongoCollection.withTimeout}, {@code timeoutMS}), so it bounds the call even on
         * a client whose own timeouts are long.
         *
         * @param timeout 10 ms to 5 min
         * @return this builder
         * @throws IllegalArgumentException if {@code timeout} is out of range
         */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.compareTo(Duration.ofMillis(10)) < 0 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("timeout must be in [PT0.01S, PT5M], but was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * The clock every expiry is computed and judged by (default the system UTC clock). MongoDB's server clock
         * is not used (that needs update pipelines): keep the clocks of all processes sharing a namespace
         * NTP-synced, and leases much longer than their skew.
         *
         * @param clock the clock every lease and retention is counted on; inject one to test expiry
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The write concern of the store's writes (default: the database's, or the server's default when the
         * database's is unacknowledged). It must be acknowledged: a claim is decided by the duplicate-key error.
         * {@code WriteConcern.MAJORITY} keeps an acknowledged claim through a failover.
         *
         * @param writeConcern an acknowledged write concern, such as {@code WriteConcern.MAJORITY}
         * @return this builder
         * @throws IllegalArgumentException if {@code writeConcern} is unacknowledged ({@code w: 0})
         */
        public Builder writeConcern(WriteConcern writeConcern) {
            Objects.requireNonNull(writeConcern, "writeConcern");
            if (!writeConcern.isAcknowledged()) {
                throw new IllegalArgumentException("writeConcern must be acknowledged (w >= 1 or majority), but was "
                        + writeConcern + ": claims are decided by the duplicate-key error the server returns");
            }
            this.writeConcern = writeConcern;
            return this;
        }

        /**
         * Whether {@link #build()} checks the TTL index and the collation (default true; one query at start-up).
         *
         * @param validateIndexes false to skip the check, for example where the user may not list indexes
         * @return this builder
         */
        public Builder validateIndexes(boolean validateIndexes) {
            this.validateIndexes = validateIndexes;
            return this;
        }

        /**
         * The reactive-streams driver's handle on the same database, for a native {@link #async()}: its calls are
         * sent through it, and no thread waits for a reply. Without one, {@code async()} throws
         * {@link UnsupportedOperationException}, as before. Needs {@code org.mongodb:mongodb-driver-reactivestreams}
         * of the sync driver's version. The store uses its own codecs, read preference, read concern, write concern
         * and timeout on it, as on the sync one.
         *
         * @param database the reactive client's database of the same name as the store's
         * @return this builder
         * @throws IllegalArgumentException if {@code database} has another name
         */
        public Builder reactive(com.mongodb.reactivestreams.client.MongoDatabase database) {
            Objects.requireNonNull(database, "database");
            if (!database.getName().equals(this.database.getName())) {
                throw new IllegalArgumentException("the reactive database must be the store's, '"
                        + this.database.getName() + "', but was '" + database.getName() + "'");
            }
            this.reactiveDatabase = database;
            return this;
        }

        /**
         * The reactive-streams driver's client, for a native {@link #async()} on the store's database: as
         * {@link #reactive(com.mongodb.reactivestreams.client.MongoDatabase)}. The client stays the caller's.
         *
         * @param client the application's reactive client, to the same deployment as the sync one
         * @return this builder
         */
        public Builder reactive(com.mongodb.reactivestreams.client.MongoClient client) {
            Objects.requireNonNull(client, "client");
            return reactive(client.getDatabase(database.getName()));
        }

        /** Runs when the store closes: the provider closes the client it created. */
        Builder onClose(Runnable onClose) {
            this.onClose = Objects.requireNonNull(onClose, "onClose");
            return this;
        }

        /**
         * Builds the store, checking its indexes first unless told not to.
         *
         * @return the store; closing it leaves the client open
         * @throws dev.dedup.DedupConfigurationException if the TTL index is missing or different, or the collection
         *     has a collation
         * @throws DedupStoreException if MongoDB could not be reached
         */
        public MongoDedupStore build() {
            MongoDedupStore store = new MongoDedupStore(this);
            if (validateIndexes) {
                store.validateIndexes();
            }
            return store;
        }
    }
}
