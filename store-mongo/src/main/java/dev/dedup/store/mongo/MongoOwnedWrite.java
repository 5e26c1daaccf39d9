package dev.dedup.store.mongo;

import dev.dedup.Claim;
import java.util.function.Predicate;
import org.bson.BsonDocument;
import org.bson.conversions.Bson;

/**
 * A complete, fail, extend or release, described once for both the blocking and the non-blocking path: the write
 * goes to the document while {@code claim} holds it ({@code filter}); {@code update} is null for the delete of a
 * release. When a resent write matches nothing, the first try may have been applied: the call succeeded iff the
 * document shows what it asked for ({@code applied}, given the document still carrying the claim's owner, or null
 * when there is none).
 */
record MongoOwnedWrite(String operation, Claim claim, BsonDocument filter, Bson update,
        Predicate<MongoRecord> applied) {

    boolean isDelete() {
        return update == null;
    }

    /** After a resend matched nothing: whether {@code stored} (null when gone) shows this write applied. */
    boolean appliedTo(MongoRecord stored) {
        return (stored == null || stored.owner().equals(claim.owner())) && applied.test(stored);
    }
}
