package dev.dedup.store.mongo;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Updates;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.spi.AbstractDedupStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.conversions.Bson;

/**
 * A {@link dev.dedup.spi.DedupStore} on MongoDB through the official sync driver. One document per key, keyed by a
 * unique {@code _id} of {@code namespace:key} (layout in {@link MongoRecord}).
 *
 * <p><b>A claim is insert-first.</b> It inserts a fresh document: a new key is one {@code insertOne}, one round trip,
 * and the unique {@code _id} makes exactly one concurrent insert win. A duplicate-key error (code 11000, told by
 * {@link ErrorCategory#DUPLICATE_KEY}, never by message text) means the key exists; the store reads it and, while it
 * is live, reports it as a {@link Duplicate} with its state, expiry and result. An expired document is taken over
 * with one conditional update whose filter names the {@code _id}, the owner it read and {@code expiresAt <= now}:
 * the first racer's update changes the owner, so every other racer's filter matches nothing and exactly one wins.
 * A write the store loses to a concurrent one (the document vanished, or another racer took it over) is retried a
 * bounded number of times; each retry means another writer made progress.
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

    /** A claim's write is lost to a concurrent one only when that one made progress; a few rounds always settle. */
    static final int CLAIM_ATTEMPTS = 5;

    /** The least time {@link #createIndexes()} allows itself. */
    private static final Duration INDEX_BUILD_TIMEOUT = Duration.ofMinutes(1);

    private final MongoCollection<BsonDocument> collection;
    private final String collectionName;
    private final Clock clock;
    private final Runnable onClose;

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
        this.collectionName = collection.getNamespace().getFullName();
        this.clock = builder.clock;
        this.onClose = builder.onClose;
    }

    /** Starts a store on a database of the application's {@link MongoClient}; the client stays the caller's. */
    public static Builder builder(MongoDatabase database) {
        return new Builder(Objects.requireNonNull(database, "database"));
    }

    /** Starts a store on {@code database} of the application's {@code client}; the client stays the caller's. */
    public static Builder builder(MongoClient client, String database) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(database, "database");
        return new Builder(client.getDatabase(database));
    }

    /** The collection's full name, {@code database.collection}. */
    public MongoNamespace collectionNamespace() {
        return collection.getNamespace();
    }

    /** The {@code _id} of {@code key}'s document: {@code namespace:key}. */
    public String documentId(String key) {
        return namespace() + ":" + key;
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
    protected ClaimResult doClaim(String key, String owner, Duration lease) {
        return call("claim", () -> claimOne(key, owner, lease, true));
    }

    /**
     * The claim loop: insert; on a duplicate key read the document; a live one is a duplicate, an expired one is
     * taken over. {@code insertFirst} is false when the caller already knows the key exists.
     */
    private ClaimResult claimOne(String key, String owner, Duration lease, boolean insertFirst) {
        String id = documentId(key);
        boolean insert = insertFirst;
        for (int attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
            if (insert) {
                long now = clock.millis();
                long expiresAt = now + lease.toMillis();
                try {
                    collection.insertOne(MongoRecord.inProgress(id, owner, expiresAt, now));
                    return claim(key, owner, expiresAt);
                } catch (MongoWriteException e) {
                    if (e.getError().getCategory() != ErrorCategory.DUPLICATE_KEY) {
                        throw e;
                    }
                }
            }
            BsonDocument found = collection.find(eq(MongoRecord.ID, id)).first();
            if (found == null) {
                insert = true; // released or deleted since: insert again
                continue;
            }
            ClaimResult result = resolve(key, owner, lease, MongoRecord.decode(found, collectionName));
            if (result != null) {
                return result;
            }
            insert = false; // another racer took it over, or its owner extended it: read it again
        }
        throw new DedupStoreException(MongoErrors.STORE + " claim in namespace '" + namespace() + "' lost to"
                + " concurrent writers " + CLAIM_ATTEMPTS + " times (" + key.length() + "-char key); retry", null, true);
    }

    /**
     * A duplicate while {@code existing} is live; else the take-over, which only succeeds while the document still
     * has the owner and the lapsed expiry that were read. Null when the take-over matched nothing.
     */
    private ClaimResult resolve(String key, String owner, Duration lease, MongoRecord existing) {
        long now = clock.millis();
        if (existing.liveAt(now)) {
            return new Duplicate(key, existing.state(), existing.expiresAt(), existing.result());
        }
        long expiresAt = now + lease.toMillis();
        BsonDocument lapsed = new BsonDocument(MongoRecord.ID, new BsonString(documentId(key)))
                .append(MongoRecord.OWNER, new BsonString(existing.owner()))
                .append(MongoRecord.EXPIRES_AT, new BsonDocument("$lte", new BsonDateTime(now)));
        Bson takeOver = Updates.combine(
                Updates.set(MongoRecord.OWNER, new BsonString(owner)),
                Updates.set(MongoRecord.STATE, new BsonString(MongoRecord.IN_PROGRESS)),
                Updates.set(MongoRecord.EXPIRES_AT, new BsonDateTime(expiresAt)),
                Updates.set(MongoRecord.CREATED_AT, new BsonDateTime(now)),
                Updates.unset(MongoRecord.COMPLETED_AT),
                Updates.unset(MongoRecord.RESULT));
        if (collection.updateOne(lapsed, takeOver).getMatchedCount() == 1) {
            return claim(key, owner, expiresAt);
        }
        return null;
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        // The batch inserts each distinct key once; repeats in the batch are duplicates of the first.
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        Map<String, ClaimResult> byKey = call("claimAll", () -> claimBatch(ownerByKey, lease));
        return inInputOrder(keys, byKey);
    }

    private Map<String, ClaimResult> claimBatch(Map<String, String> ownerByKey, Duration lease) {
        List<String> distinct = new ArrayList<>(ownerByKey.keySet());
        long now = clock.millis();
        long expiresAt = now + lease.toMillis();
        List<BsonDocument> documents = new ArrayList<>(distinct.size());
        for (String key : distinct) {
            documents.add(MongoRecord.inProgress(documentId(key), ownerByKey.get(key), expiresAt, now));
        }
        Set<Integer> taken = new HashSet<>();
        try {
            collection.insertMany(documents, new InsertManyOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            // Which inserts failed comes from the per-document errors; the reported insertedCount is not trusted
            // (the test server gets it wrong on unordered batches).
            for (BulkWriteError error : e.getWriteErrors()) {
                if (ErrorCategory.fromErrorCode(error.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                    throw e;
                }
                taken.add(error.getIndex());
            }
            if (e.getWriteConcernError() != null) {
                throw e;
            }
        }
        Map<String, ClaimResult> results = new HashMap<>();
        List<String> existingIds = new ArrayList<>();
        for (int i = 0; i < distinct.size(); i++) {
            String key = distinct.get(i);
            if (taken.contains(i)) {
                existingIds.add(documentId(key));
            } else {
                results.put(key, claim(key, ownerByKey.get(key), expiresAt));
            }
        }
        if (existingIds.isEmpty()) {
            return results;
        }
        Map<String, BsonDocument> found = new HashMap<>();
        for (BsonDocument document : collection.find(in(MongoRecord.ID, existingIds))) {
            found.put(document.getString(MongoRecord.ID).getValue(), document);
        }
        for (int i = 0; i < distinct.size(); i++) {
            if (!taken.contains(i)) {
                continue;
            }
            String key = distinct.get(i);
            String owner = ownerByKey.get(key);
            BsonDocument document = found.get(documentId(key));
            ClaimResult result = document == null ? null
                    : resolve(key, owner, lease, MongoRecord.decode(document, collectionName));
            // Gone since the insert, or taken over by a racer: settle this key alone.
            results.put(key, result != null ? result : claimOne(key, owner, lease, document == null));
        }
        return results;
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        return call(outcome == RecordState.FAILED ? "fail" : "complete", () -> {
            long now = clock.millis();
            List<Bson> updates = new ArrayList<>(List.of(
                    Updates.set(MongoRecord.STATE, new BsonString(outcome.name())),
                    Updates.set(MongoRecord.EXPIRES_AT, new BsonDateTime(now + retention.toMillis())),
                    Updates.set(MongoRecord.COMPLETED_AT, new BsonDateTime(now))));
            updates.add(result == null ? Updates.unset(MongoRecord.RESULT)
                    : Updates.set(MongoRecord.RESULT, new BsonBinary(result)));
            return collection.updateOne(heldBy(claim, now), Updates.combine(updates)).getMatchedCount() == 1;
        });
    }

    @Override
    protected boolean doRelease(Claim claim) {
        return call("release", () -> collection.deleteOne(heldBy(claim, clock.millis())).getDeletedCount() == 1);
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        return call("extend", () -> {
            long now = clock.millis();
            return collection.updateOne(heldBy(claim, now),
                    Updates.set(MongoRecord.EXPIRES_AT, new BsonDateTime(now + lease.toMillis())))
                    .getMatchedCount() == 1;
        });
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    /** The document while {@code claim} still holds it: its owner, in progress, not yet expired. */
    private BsonDocument heldBy(Claim claim, long now) {
        return new BsonDocument(MongoRecord.ID, new BsonString(documentId(claim.key())))
                .append(MongoRecord.OWNER, new BsonString(claim.owner()))
                .append(MongoRecord.STATE, new BsonString(MongoRecord.IN_PROGRESS))
                .append(MongoRecord.EXPIRES_AT, new BsonDocument("$gt", new BsonDateTime(now)));
    }

    private Claim claim(String key, String owner, long expiresAt) {
        return new Claim(namespace(), key, owner, Instant.ofEpochMilli(expiresAt));
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

        private Builder(MongoDatabase database) {
            this.database = database;
        }

        /** The collection (default {@code dedup_claims}): 1 to 120 of {@code A-Z a-z 0-9 _ - .}, not {@code system.*}. */
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

        public Builder namespace(String namespace) {
            this.namespace = DedupLimits.checkNamespace(namespace);
            return this;
        }

        /**
         * How long one operation (one round trip: server selection, connection and reply included) may take before
         * it fails with a retryable {@link DedupStoreException} (default 5 s). Applied as the driver's client-side
         * operation timeout ({@code MongoCollection.withTimeout}, {@code timeoutMS}), so it bounds the call even on
         * a client whose own timeouts are long.
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
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The write concern of the store's writes (default: the database's, or the server's default when the
         * database's is unacknowledged). It must be acknowledged: a claim is decided by the duplicate-key error.
         * {@code WriteConcern.MAJORITY} keeps an acknowledged claim through a failover.
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

        /** Whether {@link #build()} checks the TTL index and the collation (default true; one query at start-up). */
        public Builder validateIndexes(boolean validateIndexes) {
            this.validateIndexes = validateIndexes;
            return this;
        }

        /** Runs when the store closes: the provider closes the client it created. */
        Builder onClose(Runnable onClose) {
            this.onClose = Objects.requireNonNull(onClose, "onClose");
            return this;
        }

        public MongoDedupStore build() {
            MongoDedupStore store = new MongoDedupStore(this);
            if (validateIndexes) {
                store.validateIndexes();
            }
            return store;
        }
    }
}
