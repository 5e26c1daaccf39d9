package dev.dedup.store.dynamodb;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * Ends one {@code claimAll}: collects the outcome of every conditional put it sent, and returns the results, or,
 * when any put failed, releases every claim the batch won or may have written before it fails. Otherwise the keys it
 * won would stay held for a whole lease with no caller that knows of them. The releases are owner-checked, so a put
 * whose outcome is unknown is released when it was written and left alone when it was not. A release that fails too
 * is counted in the exception's message and attached to it as suppressed: that key stays held until its lease ends.
 * The blocking store waits for its puts ({@link #settle}); the async backend records each outcome as it arrives
 * ({@link #record}) and ends without a blocked thread ({@link #settleAsync}).
 */
final class DynamoDbBatchSettlement {
    private final DynamoDbDedupStore store;
    private final Map<String, String> ownerByKey;
    private final Duration lease;
    private final Map<String, ClaimResult> results = new HashMap<>(); // guarded by this
    private final Map<String, Throwable> failures = new LinkedHashMap<>(); // guarded by this

    DynamoDbBatchSettlement(DynamoDbDedupStore store, Map<String, String> ownerByKey, Duration lease) {
        this.store = store;
        this.ownerByKey = ownerByKey;
        this.lease = lease;
    }

    /** Notes one key's outcome: the put's result, or its failure. */
    synchronized void record(String key, ClaimResult result, Throwable failure) {
        if (failure == null) {
            results.put(key, result);
        } else {
            failures.put(key, failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure);
        }
    }

    /** {@return whether a put has failed: the batch will fail, so sending more is wasted} */
    synchronized boolean failed() {
        return !failures.isEmpty();
    }

    /** Waits for every put, then returns the results or releases and throws. */
    Map<String, ClaimResult> settle(Map<String, CompletableFuture<ClaimResult>> pending) {
        pending.forEach((key, claim) -> {
            try {
                record(key, claim.join(), null);
            } catch (CompletionException | CancellationException e) {
                record(key, null, e);
            }
        });
        if (!failed()) {
            return results;
        }
        List<Throwable> releaseFailures = new ArrayList<>();
        for (Claim claim : toRelease()) {
            try {
                store.release(claim);
            } catch (DedupException | IllegalStateException e) {
                releaseFailures.add(e);
            }
        }
        throw failure(releaseFailures);
    }

    /**
     * Once every sent put is recorded: the results, or the releases (sent through {@code release}, as many in
     * flight as the batch's puts) and then the batch's failure.
     */
    CompletableFuture<Map<String, ClaimResult>> settleAsync(Function<Claim, CompletableFuture<Boolean>> release) {
        if (!failed()) {
            return CompletableFuture.completedFuture(results);
        }
        List<Throwable> releaseFailures = Collections.synchronizedList(new ArrayList<>());
        return DynamoDbInFlight.each(toRelease(), store.batchConcurrency(), claim -> release.apply(claim)
                        .whenComplete((released, e) -> {
                            if (e != null) {
                                releaseFailures.add(e instanceof CompletionException && e.getCause() != null
                                        ? e.getCause() : e);
                            }
                        }), () -> false)
                .thenCompose(released -> CompletableFuture.failedFuture(failure(releaseFailures)));
    }

    /** Every key the batch won, or whose put may have been written: an unknown outcome is released by owner. */
    private synchronized List<Claim> toRelease() {
        List<Claim> claims = new ArrayList<>();
        ownerByKey.forEach((key, owner) -> {
            if (results.get(key) instanceof Claim || failures.containsKey(key)) { // else a duplicate, or never sent
                claims.add(new Claim(store.namespace(), key, owner, Instant.now().plus(lease)));
            }
        });
        return claims;
    }

    private synchronized DedupException failure(List<Throwable> releaseFailures) {
        DedupException cause = DynamoDbErrors.translate("claimAll", failures.values().iterator().next(),
                store.table());
        long won = results.values().stream().filter(Claim.class::isInstance).count();
        DedupException failure = cause instanceof DedupStoreException storeFailure
                ? new DedupStoreException(DynamoDbDedupStore.STORE + " claimAll failed on " + failures.size() + " of "
                        + ownerByKey.size() + " keys (" + cause.getMessage() + "); it released the " + won
                        + " claims it had won and any it may have written" + (releaseFailures.isEmpty() ? ""
                        : ", except " + releaseFailures.size() + " it could not release (held until their lease"
                                + " ends; see the suppressed exceptions)"), cause, storeFailure.isRetryable())
                : cause; // a configuration error (the table is gone): no retry will help, say so as it is
        List.copyOf(releaseFailures).forEach(failure::addSuppressed);
        return failure;
    }
}
