package dev.dedup.store.mongo;

import dev.dedup.DedupConfigurationException;
import dev.dedup.RecordState;
import java.time.Instant;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One dedup record as a MongoDB document, and the field names every filter and update uses:
 *
 * <pre>
 * { _id:         "namespace:key",                 string; unique, so an insert of a taken key fails with 11000
 *   owner:       "6f1c...",                       the claim's owner token (36 characters)
 *   state:       "IN_PROGRESS" | "COMPLETED" | "FAILED",
 *   expiresAt:   ISODate,                         a BSON date, so the TTL index can delete the document later
 *   createdAt:   ISODate,                         when the current claim was made (reset by a take-over)
 *   completedAt: ISODate,                         completed records only
 *   result:      BinData(0, ...),                 completed records with a result only (an empty one included)
 *   fingerprint: BinData(0, ...) }                claims made with a payload fingerprint only; complete, fail and
 *                                                 extend keep it, a take-over replaces it
 *   settledBy:   "9a2e...",                       documents a settleAll settled only: that batch's token, so the
 *                                                 batch can tell which of its writes applied; a take-over keeps it
 * </pre>
 *
 * <p>The namespace cannot contain {@code ':'} ({@link dev.dedup.DedupLimits#NAMESPACE_PATTERN}), so
 * {@code namespace + ":" + key} names exactly one (namespace, key) pair. Instants are whole milliseconds, the
 * precision of a BSON date, so the expiry a claim reports is exactly the one stored.
 */
record MongoRecord(String owner, RecordState state, Instant expiresAt, byte[] result, byte[] fingerprint) {
    static final String ID = "_id";
    static final String OWNER = "owner";
    static final String STATE = "state";
    static final String EXPIRES_AT = "expiresAt";
    static final String CREATED_AT = "createdAt";
    static final String COMPLETED_AT = "completedAt";
    static final String RESULT = "result";
    static final String FINGERPRINT = "fingerprint";
    static final String SETTLED_BY = "settledBy";

    static final String IN_PROGRESS = RecordState.IN_PROGRESS.name();
    static final String COMPLETED = RecordState.COMPLETED.name();
    private static final java.util.Set<String> STATES =
            java.util.Set.of(IN_PROGRESS, COMPLETED, RecordState.FAILED.name());

    /** The document a fresh claim inserts, with its fingerprint when it has one. */
    static BsonDocument inProgress(String id, String owner, long expiresAtMillis, long nowMillis,
            byte[] fingerprint) {
        BsonDocument document = new BsonDocument(ID, new BsonString(id))
                .append(OWNER, new BsonString(owner))
                .append(STATE, new BsonString(IN_PROGRESS))
                .append(EXPIRES_AT, new BsonDateTime(expiresAtMillis))
                .append(CREATED_AT, new BsonDateTime(nowMillis));
        if (fingerprint != null) {
            document.append(FINGERPRINT, new BsonBinary(fingerprint));
        }
        return document;
    }

    /** True while the record holds its key at {@code nowMillis}: its expiry is still ahead. */
    boolean liveAt(long nowMillis) {
        return expiresAt.toEpochMilli() > nowMillis;
    }

    /**
     * Reads a stored document; one that lacks a field or has it in another type is not ours, and guessing would
     * break the once-only guarantee, so it is a configuration error.
     */
    static MongoRecord decode(BsonDocument document, String collection) {
        BsonValue owner = document.get(OWNER);
        BsonValue state = document.get(STATE);
        BsonValue expiresAt = document.get(EXPIRES_AT);
        BsonValue result = document.get(RESULT);
        BsonValue fingerprint = document.get(FINGERPRINT);
        String problem = null;
        if (owner == null || !owner.isString()) {
            problem = OWNER + " (a string)";
        } else if (state == null || !state.isString()
                || !STATES.contains(state.asString().getValue())) {
            problem = STATE + " (IN_PROGRESS, COMPLETED or FAILED)";
        } else if (expiresAt == null || !expiresAt.isDateTime()) {
            problem = EXPIRES_AT + " (a date)";
        } else if (result != null && !result.isBinary()) {
            problem = RESULT + " (binary)";
        } else if (fingerprint != null && !fingerprint.isBinary()) {
            problem = FINGERPRINT + " (binary)";
        }
        if (problem != null) {
            throw new DedupConfigurationException("a document in " + collection + " is not a dedup record: it lacks"
                    + " the field " + problem + "; is the collection shared with other data? Give dedup a"
                    + " collection of its own");
        }
        return new MongoRecord(owner.asString().getValue(), RecordState.valueOf(state.asString().getValue()),
                Instant.ofEpochMilli(expiresAt.asDateTime().getValue()),
                result == null ? null : result.asBinary().getData(),
                fingerprint == null ? null : fingerprint.asBinary().getData());
    }
}
