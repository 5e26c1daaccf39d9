package dev.dedup.store.mongo;

import static com.mongodb.client.model.Filters.in;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import dev.dedup.Settlement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * One {@code settleAll}, described once for the blocking and the non-blocking path, which differ only in how they
 * wait: the bulk write, the read-back when it is needed, the answers, and the deletes of the released documents.
 *
 * <p>Every settlement is one {@code updateOne} under the filter of its single call ({@code _id}, owner, in progress,
 * not expired), so each is decided alone and atomically. A complete or fail writes what its single call writes. A
 * release ends the lease instead of deleting ({@code expiresAt} at 1970, lapsed on every clock, so the key can be
 * claimed at once), because a deleted document could not be read back. Each write also sets {@code settledBy} to a
 * token of this batch alone.
 *
 * <p>A bulk write answers with totals only. When it matched every write, every answer is true. Otherwise the
 * documents are read back: a write applied iff its document carries the batch's token (nothing else writes that
 * token, and a take-over keeps it); one still held by the caller's owner without it was not written. A document gone
 * or claimed afresh before the read cannot tell: when the matched count says every such one applied, they are true,
 * else false, and the claim is no longer the caller's either way. Last, the released documents still under the
 * caller's owner and the token are deleted.
 */
final class MongoSettleBatch {
    /** An expiry every clock reads as passed: a released document is free to claim until it is deleted. */
    private static final BsonDateTime LAPSED = new BsonDateTime(0);

    private final List<Settlement> settlements;
    private final List<String> documentIds;
    private final BsonString token = new BsonString(UUID.randomUUID().toString());
    private final List<UpdateOneModel<BsonDocument>> writes;

    MongoSettleBatch(MongoCommands commands, List<Settlement> settlements) {
        this.settlements = settlements;
        this.documentIds = settlements.stream().map(s -> commands.documentId(s.claim().key())).toList();
        this.writes = settlements.stream().map(s -> write(commands, s)).toList();
    }

    private UpdateOneModel<BsonDocument> write(MongoCommands commands, Settlement settlement) {
        Bson marked = Updates.set(MongoRecord.SETTLED_BY, token);
        if (settlement.kind() == Settlement.Kind.RELEASE) {
            return new UpdateOneModel<>(commands.releasing(settlement.claim()).filter(),
                    Updates.combine(Updates.set(MongoRecord.EXPIRES_AT, LAPSED), marked));
        }
        MongoOwnedWrite single = commands.finishing(settlement.claim(), settlement.endState(),
                settlement.retention(), settlement.payload());
        return new UpdateOneModel<>(single.filter(), Updates.combine(single.update(), marked));
    }

    /** One {@code updateOne} per settlement, in input order. */
    List<UpdateOneModel<BsonDocument>> writes() {
        return writes;
    }

    /** {@return every answer, when the bulk write matched every settlement; null when they must be read back} */
    List<Boolean> allApplied(BulkWriteResult written) {
        return written.getMatchedCount() == settlements.size()
                ? Collections.nCopies(settlements.size(), true) : null;
    }

    /** The read-back: the batch's documents by {@code _id}. */
    Bson documents() {
        return in(MongoRecord.ID, documentIds);
    }

    /** Only what the answers need from each document read back, not its result. */
    Bson answerFields() {
        return Projections.include(MongoRecord.OWNER, MongoRecord.SETTLED_BY);
    }

    /**
     * The answers, in input order, from the documents read back after a bulk write that matched {@code matched}.
     * On a resend ({@code retried}) the count covers the second try only, so it proves nothing.
     */
    List<Boolean> answers(Map<String, BsonDocument> found, int matched, boolean retried) {
        List<Boolean> answers = new ArrayList<>(settlements.size());
        List<Integer> unknown = new ArrayList<>();
        int proven = 0;
        for (int i = 0; i < settlements.size(); i++) {
            BsonDocument document = found.get(documentIds.get(i));
            boolean applied = document != null && token.equals(document.get(MongoRecord.SETTLED_BY));
            answers.add(applied);
            if (applied) {
                proven++;
            } else if (retried && document == null && settlements.get(i).kind() == Settlement.Kind.RELEASE) {
                // As a single release's resend: the key is free and nobody else's record was touched.
                answers.set(i, true);
            } else if (document == null || !settlements.get(i).claim().owner().equals(owner(document))) {
                unknown.add(i); // written, then deleted or claimed afresh before the read? Or never written?
            }
        }
        if (!retried && !unknown.isEmpty() && matched - proven == unknown.size()) {
            unknown.forEach(i -> answers.set(i, true));
        }
        return answers;
    }

    /** The deletes of the released documents, each while it still has the caller's owner and this batch's token. */
    List<DeleteOneModel<BsonDocument>> releasedDeletes(List<Boolean> answers) {
        List<DeleteOneModel<BsonDocument>> deletes = new ArrayList<>();
        for (int i = 0; i < settlements.size(); i++) {
            if (answers.get(i) && settlements.get(i).kind() == Settlement.Kind.RELEASE) {
                deletes.add(new DeleteOneModel<>(new BsonDocument(MongoRecord.ID, new BsonString(documentIds.get(i)))
                        .append(MongoRecord.OWNER, new BsonString(settlements.get(i).claim().owner()))
                        .append(MongoRecord.SETTLED_BY, token)));
            }
        }
        return deletes;
    }

    private static String owner(BsonDocument document) {
        BsonValue owner = document.get(MongoRecord.OWNER);
        return owner != null && owner.isString() ? owner.asString().getValue() : null;
    }
}
