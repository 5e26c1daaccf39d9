package dev.dedup.store.mongo;

import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import dev.dedup.DedupConfigurationException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates and checks the collection's TTL index on {@code expiresAt}, and checks that {@code _id} compares keys
 * exactly. The TTL index only cleans up: claims enforce expiry themselves, because MongoDB's TTL monitor runs once
 * a minute and may lag further behind under load.
 */
final class MongoIndexes {
    private static final Logger log = LoggerFactory.getLogger(MongoIndexes.class);

    /** The name mongosh and the driver give {@code {expiresAt: 1}} by default, so a hand-made index is the same. */
    static final String TTL_INDEX_NAME = MongoRecord.EXPIRES_AT + "_1";

    private MongoIndexes() {}

    /** What is wrong with the indexes; {@code missing} when creating the TTL index would fix it. */
    record Problem(boolean missing, String message) {}

    /** Creates the TTL index unless an equivalent one exists (under any name); refuses to touch a different one. */
    static void create(MongoCollection<BsonDocument> collection) {
        MongoNamespace namespace = collection.getNamespace();
        Optional<Problem> problem = check(list(collection), namespace);
        if (problem.isEmpty()) {
            log.debug("dedup collection {} already has its TTL index", namespace);
            return;
        }
        if (!problem.get().missing()) {
            throw new DedupConfigurationException(problem.get().message());
        }
        collection.createIndex(Indexes.ascending(MongoRecord.EXPIRES_AT),
                new IndexOptions().name(TTL_INDEX_NAME).expireAfter(0L, TimeUnit.SECONDS));
        log.info("created the TTL index {} (expireAfterSeconds: 0) on dedup collection {}", TTL_INDEX_NAME, namespace);
        validate(collection);
    }

    static void validate(MongoCollection<BsonDocument> collection) {
        Optional<Problem> problem = check(list(collection), collection.getNamespace());
        if (problem.isPresent()) {
            throw new DedupConfigurationException(problem.get().message());
        }
    }

    private static List<BsonDocument> list(MongoCollection<BsonDocument> collection) {
        // A collection that does not exist yet lists no indexes.
        return collection.listIndexes(BsonDocument.class).into(new ArrayList<>());
    }

    /** Judges {@code listIndexes} output; empty when the indexes are as the store needs them. */
    static Optional<Problem> check(List<BsonDocument> indexes, MongoNamespace namespace) {
        String collection = namespace.getFullName();
        for (BsonDocument index : indexes) {
            if (isSingleField(index, MongoRecord.ID) && index.containsKey("collation")) {
                BsonValue locale = index.getDocument("collation").get("locale");
                if (locale == null || !locale.isString() || !"simple".equals(locale.asString().getValue())) {
                    return Optional.of(new Problem(false, "dedup collection " + collection + " has a default"
                            + " collation (" + index.getDocument("collation").toJson() + "), so _id compares keys by it and"
                            + " keys that differ only in case or accents could collide. dedup needs the simple,"
                            + " byte-wise comparison: use a collection created without a collation (createIndexes()"
                            + " creates one when it is missing)"));
                }
            }
        }
        BsonDocument different = null;
        for (BsonDocument index : indexes) {
            if (!isSingleField(index, MongoRecord.EXPIRES_AT)) {
                continue;
            }
            if (isZero(index.get("expireAfterSeconds")) && !index.containsKey("partialFilterExpression")) {
                return Optional.empty();
            }
            different = different == null ? index : different;
        }
        if (different == null) {
            return Optional.of(new Problem(true, "dedup collection " + collection + " has no TTL index on "
                    + MongoRecord.EXPIRES_AT + ". Call MongoDedupStore.createIndexes() once at deployment, or run in"
                    + " mongosh:\n  " + createCommand(namespace) + "\nClaims enforce expiry either way; without the"
                    + " index expired documents are never deleted. To skip this check, build the store with"
                    + " validateIndexes(false)"));
        }
        String name = different.getString("name", new BsonString("?")).getValue();
        String found = describe(different);
        String fix;
        if (different.containsKey("expireAfterSeconds") && !different.containsKey("partialFilterExpression")) {
            fix = "change it in mongosh:\n  " + database(namespace) + ".runCommand({collMod: \""
                    + namespace.getCollectionName() + "\", index: {name: \"" + name + "\", expireAfterSeconds: 0}})";
        } else {
            fix = "replace it in mongosh:\n  " + collectionRef(namespace) + ".dropIndex(\"" + name + "\")\n  "
                    + createCommand(namespace) + "\n(or drop it and call MongoDedupStore.createIndexes())";
        }
        return Optional.of(new Problem(false, "dedup collection " + collection + " has an index on "
                + MongoRecord.EXPIRES_AT + " that is not the TTL index dedup needs: found " + found + ", expected"
                + " {expiresAt: 1} with expireAfterSeconds: 0 and no partialFilterExpression. Documents would be"
                + " deleted late, or never; " + fix));
    }

    /** The mongosh command that creates the TTL index by hand. */
    static String createCommand(MongoNamespace namespace) {
        return collectionRef(namespace) + ".createIndex({" + MongoRecord.EXPIRES_AT + ": 1}, {expireAfterSeconds: 0})";
    }

    private static String database(MongoNamespace namespace) {
        return "db.getSiblingDB(\"" + namespace.getDatabaseName() + "\")";
    }

    private static String collectionRef(MongoNamespace namespace) {
        return database(namespace) + ".getCollection(\"" + namespace.getCollectionName() + "\")";
    }

    private static String describe(BsonDocument index) {
        BsonDocument shown = new BsonDocument();
        for (String field : List.of("name", "key", "expireAfterSeconds", "partialFilterExpression")) {
            if (index.containsKey(field)) {
                shown.append(field, index.get(field));
            }
        }
        return shown.toJson() + (index.containsKey("expireAfterSeconds") ? "" : " (not a TTL index)");
    }

    /** A key pattern of exactly {@code field}, ascending or descending: either serves a TTL index. */
    private static boolean isSingleField(BsonDocument index, String field) {
        BsonValue key = index.get("key");
        if (key == null || !key.isDocument() || key.asDocument().size() != 1) {
            return false;
        }
        BsonValue direction = key.asDocument().get(field);
        return direction != null && direction.isNumber()
                && Math.abs(direction.asNumber().doubleValue()) == 1.0;
    }

    private static boolean isZero(BsonValue value) {
        return value != null && value.isNumber() && value.asNumber().doubleValue() == 0.0;
    }
}
