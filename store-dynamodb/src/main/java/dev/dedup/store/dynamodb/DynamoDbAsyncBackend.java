package dev.dedup.store.dynamodb;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import dev.dedup.spi.ContentionRetry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * The DynamoDB store's non-blocking calls: the requests, item readings and error mapping of the blocking ones
 * ({@link DynamoDbRequests}, {@link DynamoDbErrors}), sent on the {@link DynamoDbAsyncClient} and finished in its
 * completion callbacks, so no thread waits for a reply. The SDK resends a call after a lost reply as the sync client
 * does, and a refusal is judged as on the blocking path: a claim that meets its own owner token is the caller's, a
 * refused update or release the SDK sent more than once is read back. A claim whose key changes under it retries
 * after a short pause on {@link CompletableFuture#delayedExecutor}'s timer, within the store's claim deadline.
 */
final class DynamoDbAsyncBackend implements AsyncBackend {
    private final DynamoDbDedupStore store;
    private final DynamoDbRequests requests;
    private final DynamoDbAsyncClient client;

    DynamoDbAsyncBackend(DynamoDbDedupStore store, DynamoDbAsyncClient client) {
        this.store = store;
        this.requests = store.requests();
        this.client = client;
    }

    @Override
    public CompletableFuture<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
        return claim(key, AbstractDedupStore.newOwnerToken(), lease, fingerprint);
    }

    /** A claim under {@code owner}, for this view and for the blocking claimAll's concurrent puts. */
    CompletableFuture<ClaimResult> claim(String key, String owner, Duration lease, byte[] fingerprint) {
        return attemptClaim(key, owner, lease, fingerprint, store.claimRetry());
    }

    private CompletableFuture<ClaimResult> attemptClaim(String key, String owner, Duration lease, byte[] fingerprint,
            ContentionRetry retry) {
        Instant expiresAt = requests.now().plus(lease);
        return send("claim", () -> client.putItem(requests.claim(key, owner, expiresAt, fingerprint)),
                written -> requests.claimed(key, owner, expiresAt), taken -> {
                    Map<String, AttributeValue> item = DynamoDbRequests.refusedItem(taken);
                    return (item != null ? CompletableFuture.completedFuture(item) : read(key))
                            .thenCompose(existing -> {
                                ClaimResult decided = requests.decide(key, owner, existing);
                                if (decided != null) {
                                    return CompletableFuture.completedFuture(decided);
                                }
                                // Expired or deleted in between: another writer made progress; go again shortly.
                                long pause = retry.nextPauseNanosOrGiveUp(DynamoDbDedupStore.STORE,
                                        "claim in namespace '" + store.namespace() + "'");
                                return CompletableFuture.runAsync(() -> {},
                                        CompletableFuture.delayedExecutor(pause, TimeUnit.NANOSECONDS))
                                        .thenCompose(paused -> attemptClaim(key, owner, lease, fingerprint, retry));
                            });
                });
    }

    @Override
    public CompletableFuture<Boolean> finish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        return update(claim, requests.finish(claim, outcome, retention, payload));
    }

    @Override
    public CompletableFuture<Boolean> extend(Claim claim, Duration lease) {
        return update(claim, requests.extend(claim, lease));
    }

    private CompletableFuture<Boolean> update(Claim claim, DynamoDbRequests.OwnerUpdate update) {
        return send(update.operation(), () -> client.updateItem(update.request()), updated -> true,
                refused -> DynamoDbRequests.retried(refused)
                        ? read(claim.key()).thenApply(item -> update.appliedBefore(claim, item))
                        : CompletableFuture.completedFuture(false));
    }

    @Override
    public CompletableFuture<Boolean> release(Claim claim) {
        // A retried delete whose first attempt went through finds the item gone: the key is free, as asked.
        return send("release", () -> client.deleteItem(requests.release(claim)), deleted -> true,
                refused -> DynamoDbRequests.retried(refused)
                        ? read(claim.key()).thenApply(Objects::isNull)
                        : CompletableFuture.completedFuture(false));
    }

    @Override
    public CompletableFuture<KeyRecord> inspect(String key) {
        return send("inspect", () -> read(key), item -> requests.liveRecord(key, item), null);
    }

    @Override
    public CompletableFuture<Boolean> forget(String key) {
        return send("forget", () -> client.deleteItem(requests.forget(key)), requests::forgot, null);
    }

    /**
     * The distinct keys' conditional puts, at most the store's batchConcurrency in flight; after a failure no more
     * are sent, and the batch ends as the blocking one does ({@link DynamoDbBatchSettlement}).
     */
    @Override
    public CompletableFuture<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
        Map<String, String> ownerByKey = AbstractDedupStore.ownersOfDistinctKeys(keys);
        DynamoDbBatchSettlement settlement = new DynamoDbBatchSettlement(store, ownerByKey, lease);
        return DynamoDbInFlight.each(ownerByKey.entrySet(), store.batchConcurrency(),
                        entry -> claim(entry.getKey(), entry.getValue(), lease, null)
                                .whenComplete((result, failure) -> settlement.record(entry.getKey(), result, failure)),
                        settlement::failed)
                .thenCompose(sent -> settlement.settleAsync(this::release))
                .thenApply(byKey -> AbstractDedupStore.inInputOrder(keys, byKey));
    }

    /**
     * Each settlement's own conditional write (an UpdateItem for complete and fail, a DeleteItem for release, with
     * the conditions and the lost-reply rule of the single calls), at most the store's batchConcurrency in flight,
     * the answers gathered in input order. DynamoDB has no conditional batch write, and a transaction fails whole
     * when one condition fails, while each settlement is decided alone: a refused condition is that settlement's
     * false. Every write is sent even after one failed, so as many claims as possible are settled.
     */
    @Override
    public CompletableFuture<List<Boolean>> settleAll(List<Settlement> settlements) {
        List<CompletableFuture<Boolean>> answers =
                settlements.stream().map(settlement -> new CompletableFuture<Boolean>()).toList();
        return DynamoDbInFlight.each(IntStream.range(0, settlements.size()).boxed().toList(), store.batchConcurrency(),
                        i -> settle(settlements.get(i)).whenComplete((settled, failure) -> {
                            if (failure == null) {
                                answers.get(i).complete(settled);
                            } else {
                                answers.get(i).completeExceptionally(failure);
                            }
                        }), () -> false)
                .thenCompose(sent -> inInputOrder(answers));
    }

    private CompletableFuture<Boolean> settle(Settlement settlement) {
        return settlement.kind() == Settlement.Kind.RELEASE ? release(settlement.claim())
                : finish(settlement.claim(), settlement.endState(), settlement.retention(), settlement.payload());
    }

    /** Every answer in input order; or, when a write failed, the first failure, saying how many were settled. */
    private CompletableFuture<List<Boolean>> inInputOrder(List<CompletableFuture<Boolean>> answers) {
        List<Throwable> failures = new ArrayList<>();
        long settled = 0;
        for (CompletableFuture<Boolean> answer : answers) { // all done: nothing here waits
            Throwable failed = answer.handle((settledOne, failure) -> failure).join();
            if (failed != null) {
                failures.add(failed instanceof CompletionException && failed.getCause() != null
                        ? failed.getCause() : failed);
            } else if (answer.join()) {
                settled++;
            }
        }
        if (failures.isEmpty()) {
            return CompletableFuture.completedFuture(answers.stream().map(CompletableFuture::join).toList());
        }
        DedupException first = DynamoDbErrors.translate("settleAll", failures.get(0), requests.table());
        DedupException failure = first instanceof DedupStoreException storeFailure
                ? new DedupStoreException(DynamoDbDedupStore.STORE + " settleAll failed on " + failures.size() + " of "
                        + answers.size() + " settlements (" + first.getMessage() + "); the " + settled + " it settled"
                        + " stand, the others lapse with their lease", first, storeFailure.isRetryable())
                : first; // a configuration error (the table is gone): say so as it is
        failures.subList(1, failures.size()).forEach(failure::addSuppressed);
        return CompletableFuture.failedFuture(failure);
    }

    /** One consistent read of the key's item, or null. */
    private CompletableFuture<Map<String, AttributeValue>> read(String key) {
        return client.getItem(requests.consistentRead(key)).thenApply(DynamoDbRequests::itemOf);
    }

    /**
     * Sends one request and reads its reply; a refused condition goes to {@code onRefused} (null: none expected).
     * Every other failure, thrown or staged, here or in what follows, completes the stage with the store's exception
     * for {@code operation}, mapped by {@link DynamoDbErrors} as the blocking call's is.
     */
    private <R, T> CompletableFuture<T> send(String operation, Supplier<CompletableFuture<R>> request,
            Function<R, T> onReply, Function<ConditionalCheckFailedException, CompletableFuture<T>> onRefused) {
        CompletableFuture<T> outcome;
        try {
            outcome = request.get().handle((reply, failure) -> {
                if (failure == null) {
                    return CompletableFuture.completedFuture(onReply.apply(reply));
                }
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (onRefused != null && cause instanceof ConditionalCheckFailedException refused) {
                    return onRefused.apply(refused);
                }
                return CompletableFuture.<T>failedFuture(cause);
            }).thenCompose(Function.identity());
        } catch (RuntimeException e) {
            outcome = CompletableFuture.failedFuture(e); // a closed client throws instead of failing its future
        }
        return outcome.exceptionallyCompose(failure -> CompletableFuture.failedFuture(
                DynamoDbErrors.translate(operation, failure, requests.table())));
    }
}
