package dev.dedup.store.mongo;

import static com.mongodb.client.model.Filters.in;
import static java.util.concurrent.CompletableFuture.completedFuture;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoWriteException;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.reactivestreams.client.MongoDatabase;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import dev.dedup.spi.ContentionRetry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.BsonDocument;

/**
 * The MongoDB store's non-blocking calls, on the reactive-streams driver: the same documents, filters, updates and
 * readers as the blocking calls ({@link MongoCommands}), the same resend after a broken connection
 * ({@link MongoRetryOnce#secondTryMillis}) and the same error mapping, each step chained on the previous reply, so no
 * thread waits. Replies complete on the driver's threads. The only pause, between two tries of a claim that lost to
 * a concurrent writer, runs on the JDK's delay timer, which then only sends the next request.
 */
final class MongoAsyncBackend implements AsyncBackend {
    /** One try of an operation on {@code collection}; {@code retried} is true on the resend. */
    private interface Attempt<T> {
        CompletableFuture<T> run(MongoCollection<BsonDocument> collection, boolean retried);
    }

    private final MongoCommands commands;
    private final Duration timeout;
    private final MongoCollection<BsonDocument> collection;

    MongoAsyncBackend(MongoCommands commands, Duration timeout, MongoDatabase database,
            com.mongodb.client.MongoCollection<BsonDocument> blocking) {
        this.commands = commands;
        this.timeout = timeout;
        // The blocking collection's settings, decided once there, so both paths read and write alike.
        this.collection = database.getCollection(blocking.getNamespace().getCollectionName(), BsonDocument.class)
                .withCodecRegistry(blocking.getCodecRegistry())
                .withReadPreference(blocking.getReadPreference())
                .withReadConcern(blocking.getReadConcern())
                .withWriteConcern(blocking.getWriteConcern())
                .withTimeout(blocking.getTimeout(TimeUnit.MILLISECONDS), TimeUnit.MILLISECONDS);
    }

    /**
     * Gives {@code builder} a reactive client of its own, on the provider's settings; returns what closes it and then
     * runs {@code closeOthers}. Only called when the optional driver is on the class path.
     */
    static Runnable ownClient(MongoDedupStore.Builder builder, MongoClientSettings settings, Runnable closeOthers) {
        MongoClient client = MongoClients.create(settings);
        builder.reactive(client);
        return () -> {
            try {
                client.close();
            } finally {
                closeOthers.run();
            }
        };
    }

    @Override
    public CompletableFuture<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
        String owner = AbstractDedupStore.newOwnerToken();
        ContentionRetry retry = ContentionRetry.within(timeout);
        return call("claim", MongoDedupStore.deadline(retry),
                (on, retried) -> claimOne(on, key, owner, lease, fingerprint, true, retry));
    }

    /** The blocking claim loop, one reply at a time: insert, else read, then the duplicate or the take-over. */
    private CompletableFuture<ClaimResult> claimOne(MongoCollection<BsonDocument> on, String key, String owner,
            Duration lease, byte[] fingerprint, boolean insert, ContentionRetry retry) {
        CompletableFuture<ClaimResult> inserted = insert ? insert(on, key, owner, lease, fingerprint)
                : completedFuture(null);
        return inserted.thenCompose(claimed -> claimed != null ? completedFuture(claimed)
                : MongoReplies.first(on.find(commands.byId(key)).first()).thenCompose(found -> found == null
                        // Released or deleted since: insert again.
                        ? again(retry, () -> claimOne(on, key, owner, lease, fingerprint, true, retry))
                        : resolve(on, key, owner, lease, fingerprint, found).thenCompose(result -> result != null
                                ? completedFuture(result)
                                // Taken over or extended by another writer: read again.
                                : again(retry, () -> claimOne(on, key, owner, lease, fingerprint, false, retry)))));
    }

    /** The fresh claim, or null when the key exists (a duplicate-key error). */
    private CompletableFuture<ClaimResult> insert(MongoCollection<BsonDocument> on, String key, String owner,
            Duration lease, byte[] fingerprint) {
        long now = commands.now();
        long expiresAt = now + lease.toMillis();
        return MongoReplies.first(on.insertOne(
                        MongoRecord.inProgress(commands.documentId(key), owner, expiresAt, now, fingerprint)))
                .<ClaimResult>thenApply(inserted -> commands.claim(key, owner, expiresAt))
                .exceptionallyCompose(failure -> unwrap(failure) instanceof MongoWriteException write
                        && MongoCommands.isDuplicateKey(write) ? completedFuture(null)
                        : CompletableFuture.failedFuture(unwrap(failure)));
    }

    /** As the blocking resolve: the live document's outcome, else the take-over; null when that matched nothing. */
    private CompletableFuture<ClaimResult> resolve(MongoCollection<BsonDocument> on, String key, String owner,
            Duration lease, byte[] fingerprint, BsonDocument found) {
        long now = commands.now();
        MongoRecord existing = commands.decode(found);
        ClaimResult live = commands.liveOutcome(key, owner, existing, now);
        if (live != null) {
            return completedFuture(live);
        }
        long expiresAt = now + lease.toMillis();
        return MongoReplies.first(on.updateOne(commands.lapsed(key, existing, now),
                        MongoCommands.takeOver(owner, expiresAt, now, fingerprint)))
                .thenApply(updated -> updated.getMatchedCount() == 1 ? commands.claim(key, owner, expiresAt) : null);
    }

    /**
     * The next try of a claim that lost to a concurrent writer, after {@link ContentionRetry}'s pause, or its
     * retryable failure past the deadline. The pause runs on the JDK's shared delay thread (no executor of ours);
     * it only sends the next request.
     */
    private CompletableFuture<ClaimResult> again(ContentionRetry retry,
            Supplier<CompletableFuture<ClaimResult>> next) {
        long pause = retry.nextPauseNanosOrGiveUp(MongoErrors.STORE, commands.contendedClaim());
        return CompletableFuture.supplyAsync(next,
                CompletableFuture.delayedExecutor(pause, TimeUnit.NANOSECONDS, Runnable::run)).thenCompose(f -> f);
    }

    @Override
    public CompletableFuture<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
        Map<String, String> ownerByKey = AbstractDedupStore.ownersOfDistinctKeys(keys);
        ContentionRetry retry = ContentionRetry.within(timeout);
        // Safe to run twice: a key the first try wrote comes back as a duplicate-key error carrying our own owner.
        return call("claimAll", MongoDedupStore.deadline(retry), (on, retried) -> claimBatch(on, ownerByKey, lease,
                retry).thenApply(byKey -> AbstractDedupStore.inInputOrder(keys, byKey)));
    }

    /** The blocking batch: one unordered insertMany, one find of the keys that exist, then each of those settled. */
    private CompletableFuture<Map<String, ClaimResult>> claimBatch(MongoCollection<BsonDocument> on,
            Map<String, String> ownerByKey, Duration lease, ContentionRetry retry) {
        long now = commands.now();
        long expiresAt = now + lease.toMillis();
        Map<String, ClaimResult> results = new HashMap<>();
        return MongoReplies.first(on.insertMany(commands.batchDocuments(ownerByKey, expiresAt, now),
                        new InsertManyOptions().ordered(false)))
                .<Set<Integer>>thenApply(inserted -> Set.of())
                .exceptionallyCompose(failure -> unwrap(failure) instanceof MongoBulkWriteException bulk
                        ? completedFuture(MongoCommands.duplicateKeys(bulk))
                        : CompletableFuture.failedFuture(unwrap(failure)))
                .thenCompose(taken -> {
                    List<String> existing = commands.wonOrTaken(ownerByKey, taken, expiresAt, results);
                    if (existing.isEmpty()) {
                        return completedFuture(results);
                    }
                    return MongoReplies.all(on.find(in(MongoRecord.ID, commands.documentIds(existing))))
                            .thenCompose(documents -> settle(on, existing, MongoCommands.byDocumentId(documents),
                                    ownerByKey, lease, retry, results));
                });
    }

    /**
     * Settles, one after the other as the blocking batch does (they share one {@link ContentionRetry}), the keys
     * whose insert met a document: gone since the insert, or taken over by a racer, a key is claimed alone.
     */
    private CompletableFuture<Map<String, ClaimResult>> settle(MongoCollection<BsonDocument> on,
            List<String> existing, Map<String, BsonDocument> found, Map<String, String> ownerByKey, Duration lease,
            ContentionRetry retry, Map<String, ClaimResult> results) {
        CompletableFuture<Void> chain = completedFuture(null);
        for (String key : existing) {
            String owner = ownerByKey.get(key);
            BsonDocument document = found.get(commands.documentId(key));
            chain = chain.thenCompose(ignored -> (document == null ? completedFuture((ClaimResult) null)
                            : resolve(on, key, owner, lease, null, document))
                    .thenCompose(result -> result != null ? completedFuture(result)
                            : claimOne(on, key, owner, lease, null, document == null, retry))
                    .thenAccept(result -> results.put(key, result)));
        }
        return chain.thenApply(ignored -> results);
    }

    @Override
    public CompletableFuture<Boolean> finish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        return ownerChecked(commands.finishing(claim, outcome, retention, payload));
    }

    @Override
    public CompletableFuture<Boolean> release(Claim claim) {
        return ownerChecked(commands.releasing(claim));
    }

    @Override
    public CompletableFuture<Boolean> extend(Claim claim, Duration lease) {
        return ownerChecked(commands.extending(claim, lease));
    }

    /** As the blocking path: a resend that matches nothing reads the document to tell whether the first applied. */
    private CompletableFuture<Boolean> ownerChecked(MongoOwnedWrite write) {
        return call(write.operation(), deadline(), (on, retried) -> send(on, write).thenCompose(matched ->
                matched || !retried ? completedFuture(matched)
                        : MongoReplies.first(on.find(commands.byId(write.claim().key())).first())
                                .thenApply(found -> write.appliedTo(found == null ? null : commands.decode(found)))));
    }

    private static CompletableFuture<Boolean> send(MongoCollection<BsonDocument> on, MongoOwnedWrite write) {
        return write.isDelete()
                ? MongoReplies.first(on.deleteOne(write.filter())).thenApply(deleted -> deleted.getDeletedCount() == 1)
                : MongoReplies.first(on.updateOne(write.filter(), write.update()))
                        .thenApply(updated -> updated.getMatchedCount() == 1);
    }

    /** As the blocking settleAll ({@link MongoSettleBatch}): the bulk write, the read-back if needed, the deletes. */
    @Override
    public CompletableFuture<List<Boolean>> settleAll(List<Settlement> settlements) {
        MongoSettleBatch batch = new MongoSettleBatch(commands, settlements);
        return call("settleAll", deadline(), (on, retried) -> MongoReplies.first(
                        on.bulkWrite(batch.writes(), MongoDedupStore.UNORDERED))
                .thenCompose(written -> {
                    List<Boolean> answers = batch.allApplied(written);
                    return answers != null ? completedFuture(answers)
                            : MongoReplies.all(on.find(batch.documents()).projection(batch.answerFields()))
                                    .thenApply(found -> batch.answers(MongoCommands.byDocumentId(found),
                                            written.getMatchedCount(), retried));
                })
                .thenCompose(answers -> {
                    List<DeleteOneModel<BsonDocument>> deletes = batch.releasedDeletes(answers);
                    return deletes.isEmpty() ? completedFuture(answers)
                            : MongoReplies.first(on.bulkWrite(deletes, MongoDedupStore.UNORDERED))
                                    .thenApply(deleted -> answers);
                }));
    }

    @Override
    public CompletableFuture<KeyRecord> inspect(String key) {
        return call("inspect", deadline(), (on, retried) -> MongoReplies.first(on.find(commands.byId(key)).first())
                .thenApply(found -> commands.inspected(key, found)));
    }

    @Override
    public CompletableFuture<Boolean> forget(String key) {
        BsonDocument live = commands.live(key);
        return call("forget", deadline(), (on, retried) -> MongoReplies.first(on.deleteOne(live))
                .thenApply(deleted -> deleted.getDeletedCount() == 1));
    }

    private long deadline() {
        return System.nanoTime() + timeout.toNanos();
    }

    /**
     * {@link MongoRetryOnce#run} without waiting: one try, and a second on what the first left of the deadline
     * after a broken connection; the stage fails with the exception the blocking call would throw.
     */
    private <T> CompletableFuture<T> call(String operation, long deadlineNanos, Attempt<T> attempt) {
        CompletableFuture<T> result = new CompletableFuture<>();
        start(attempt, collection, false).exceptionallyCompose(first -> {
            Throwable cause = unwrap(first);
            long remainingMillis = MongoRetryOnce.secondTryMillis(cause, deadlineNanos);
            if (remainingMillis < 1) {
                return CompletableFuture.failedFuture(cause);
            }
            return start(attempt, collection.withTimeout(remainingMillis, TimeUnit.MILLISECONDS), true)
                    .whenComplete((ignored, second) -> {
                        if (second != null && unwrap(second) != cause) {
                            unwrap(second).addSuppressed(cause);
                        }
                    });
        }).whenComplete((value, failure) -> {
            if (failure == null) {
                result.complete(value);
            } else {
                Throwable cause = unwrap(failure);
                result.completeExceptionally(cause instanceof RuntimeException runtime
                        ? MongoErrors.translate(operation, runtime) : cause);
            }
        });
        return result;
    }

    /** One try; a driver call that throws instead of failing its publisher fails the stage the same way. */
    private static <T> CompletableFuture<T> start(Attempt<T> attempt, MongoCollection<BsonDocument> on,
            boolean retried) {
        try {
            return attempt.run(on, retried);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
