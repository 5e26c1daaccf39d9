package dev.dedup.store.mongo;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.model.Updates;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.conversions.Bson;

/**
 * The documents, filters, updates and reply readers of one store's operations, whichever driver sends them: the
 * blocking calls ({@link MongoDedupStore}) and the non-blocking ones ({@link MongoAsyncBackend}) differ only in how
 * they wait. Every expiry is computed and judged on the store's clock.
 */
final class MongoCommands {
    private final String namespace;
    private final String collectionName;
    private final Clock clock;

    MongoCommands(String namespace, String collectionName, Clock clock) {
        this.namespace = namespace;
        this.collectionName = collectionName;
        this.clock = clock;
    }

    /** The {@code _id} of the document that holds {@code key}: {@code namespace:key}. */
    String documentId(String key) {
        return namespace + ":" + key;
    }

    /**
     * What a claim meets in {@code existing} while it is live: a duplicate, unless it carries this claim's own owner
     * token (an earlier try of this claim was written, its reply lost): then it is the caller's claim. Null once it
     * has expired: it is to be taken over.
     */
    ClaimResult liveOutcome(String key, String owner, MongoRecord existing, long now) {
        if (!existing.liveAt(now)) {
            return null;
        }
        if (existing.owner().equals(owner) && existing.state() == RecordState.IN_PROGRESS) {
            return claim(key, owner, existing.expiresAt().toEpochMilli());
        }
        return new Duplicate(key, existing.state(), existing.expiresAt(), existing.result(), existing.fingerprint());
    }

    /**
     * The take-over's filter: the document while it still has the owner and the lapsed expiry that were read, so
     * the first racer's update changes the owner and every other racer's matches nothing.
     */
    BsonDocument lapsed(String key, MongoRecord existing, long now) {
        return new BsonDocument(MongoRecord.ID, new BsonString(documentId(key)))
                .append(MongoRecord.OWNER, new BsonString(existing.owner()))
                .append(MongoRecord.EXPIRES_AT, new BsonDocument("$lte", new BsonDateTime(now)));
    }

    /** The take-over's update: a fresh claim by {@code owner}, with this claim's fingerprint or none. */
    static Bson takeOver(String owner, long expiresAt, long now, byte[] fingerprint) {
        return Updates.combine(
                Updates.set(MongoRecord.OWNER, new BsonString(owner)),
                Updates.set(MongoRecord.STATE, new BsonString(MongoRecord.IN_PROGRESS)),
                Updates.set(MongoRecord.EXPIRES_AT, new BsonDateTime(expiresAt)),
                Updates.set(MongoRecord.CREATED_AT, new BsonDateTime(now)),
                Updates.unset(MongoRecord.COMPLETED_AT),
                Updates.unset(MongoRecord.RESULT),
                fingerprint == null ? Updates.unset(MongoRecord.FINGERPRINT)
                        : Updates.set(MongoRecord.FINGERPRINT, new BsonBinary(fingerprint)));
    }

    static boolean isDuplicateKey(MongoWriteException e) {
        return e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
    }

    /** What a claim that keeps losing to concurrent writers reports when it gives up. */
    String contendedClaim() {
        return "claim in namespace '" + namespace + "'";
    }

    /** A batch's fresh claims, one document per distinct key, in the map's order. */
    List<BsonDocument> batchDocuments(Map<String, String> ownerByKey, long expiresAt, long now) {
        List<BsonDocument> documents = new ArrayList<>(ownerByKey.size());
        ownerByKey.forEach((key, owner) -> documents.add(
                MongoRecord.inProgress(documentId(key), owner, expiresAt, now, null)));
        return documents;
    }

    /**
     * The positions of a batch's inserts that met an existing key. Which inserts failed comes from the per-document
     * errors; the reported insertedCount is not trusted (the test server gets it wrong on unordered batches). Any
     * other failure is rethrown.
     */
    static Set<Integer> duplicateKeys(MongoBulkWriteException e) {
        Set<Integer> taken = new HashSet<>();
        for (BulkWriteError error : e.getWriteErrors()) {
            if (ErrorCategory.fromErrorCode(error.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                throw e;
            }
            taken.add(error.getIndex());
        }
        if (e.getWriteConcernError() != null) {
            throw e;
        }
        return taken;
    }

    /**
     * Puts the claims a batch won by inserting into {@code results}; returns the keys whose insert met an existing
     * document ({@code taken} positions, in the map's order), to be read and settled one by one.
     */
    List<String> wonOrTaken(Map<String, String> ownerByKey, Set<Integer> taken, long expiresAt,
            Map<String, ClaimResult> results) {
        List<String> existing = new ArrayList<>();
        int i = 0;
        for (Map.Entry<String, String> entry : ownerByKey.entrySet()) {
            if (taken.contains(i++)) {
                existing.add(entry.getKey());
            } else {
                results.put(entry.getKey(), claim(entry.getKey(), entry.getValue(), expiresAt));
            }
        }
        return existing;
    }

    /** The {@code _id}s of the documents that hold {@code keys}, for one {@code find} by {@code _id $in}. */
    List<String> documentIds(List<String> keys) {
        return keys.stream().map(this::documentId).toList();
    }

    static Map<String, BsonDocument> byDocumentId(Iterable<BsonDocument> documents) {
        Map<String, BsonDocument> found = new HashMap<>();
        for (BsonDocument document : documents) {
            found.put(document.getString(MongoRecord.ID).getValue(), document);
        }
        return found;
    }

    MongoOwnedWrite finishing(Claim claim, RecordState outcome, Duration retention, byte[] result) {
        long now = clock.millis();
        long expiresAt = now + retention.toMillis();
        Bson update = Updates.combine(
                Updates.set(MongoRecord.STATE, new BsonString(outcome.name())),
                Updates.set(MongoRecord.EXPIRES_AT, new BsonDateTime(expiresAt)),
                Updates.set(MongoRecord.COMPLETED_AT, new BsonDateTime(now)),
                result == null ? Updates.unset(MongoRecord.RESULT)
                        : Updates.set(MongoRecord.RESULT, new BsonBinary(result)));
        return new MongoOwnedWrite(outcome == RecordState.FAILED ? "fail" : "complete", claim, heldBy(claim, now),
                update, stored -> stored != null && stored.state() == outcome
                        && stored.expiresAt().toEpochMilli() == expiresAt);
    }

    MongoOwnedWrite releasing(Claim claim) {
        // A resent delete whose first try went through finds the document gone: the key is free, as asked.
        return new MongoOwnedWrite("release", claim, heldBy(claim, clock.millis()), null, stored -> stored == null);
    }

    MongoOwnedWrite extending(Claim claim, Duration lease) {
        long now = clock.millis();
        long expiresAt = now + lease.toMillis();
        return new MongoOwnedWrite("extend", claim, heldBy(claim, now),
                Updates.set(MongoRecord.EXPIRES_AT, new BsonDateTime(expiresAt)),
                stored -> stored != null && stored.state() == RecordState.IN_PROGRESS
                        && stored.expiresAt().toEpochMilli() == expiresAt);
    }

    /** The record {@code found} holds for {@code key}, or null when there is none or it has expired. */
    KeyRecord inspected(String key, BsonDocument found) {
        if (found == null) {
            return null;
        }
        MongoRecord stored = decode(found);
        // The TTL index deletes late: a document past its expiry is absent, by the claim's rule and this clock.
        if (!stored.liveAt(clock.millis())) {
            return null;
        }
        return new KeyRecord(key, stored.state(), stored.expiresAt(), stored.owner(), stored.fingerprint(),
                stored.result());
    }

    /**
     * The document of {@code key} while it is live. Only a live document counts for forget, so the filter carries
     * the expiry; an expired one is left to the take-over and the TTL index. A resend after a broken connection
     * finds nothing and answers false for a delete the first try made.
     */
    BsonDocument live(String key) {
        return new BsonDocument(MongoRecord.ID, new BsonString(documentId(key)))
                .append(MongoRecord.EXPIRES_AT, new BsonDocument("$gt", new BsonDateTime(clock.millis())));
    }

    /** The document while {@code claim} still holds it: its owner, in progress, not yet expired. */
    private BsonDocument heldBy(Claim claim, long now) {
        return new BsonDocument(MongoRecord.ID, new BsonString(documentId(claim.key())))
                .append(MongoRecord.OWNER, new BsonString(claim.owner()))
                .append(MongoRecord.STATE, new BsonString(MongoRecord.IN_PROGRESS))
                .append(MongoRecord.EXPIRES_AT, new BsonDocument("$gt", new BsonDateTime(now)));
    }

    Bson byId(String key) {
        return eq(MongoRecord.ID, documentId(key));
    }

    MongoRecord decode(BsonDocument document) {
        return MongoRecord.decode(document, collectionName);
    }

    long now() {
        return clock.millis();
    }

    Claim claim(String key, String owner, long expiresAt) {
        return new Claim(namespace, key, owner, Instant.ofEpochMilli(expiresAt));
    }
}
