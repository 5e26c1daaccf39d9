package dev.dedup.store.dynamodb;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Ends one {@code claimAll}: waits for every conditional put it sent, and returns the results, or, when any put
 * failed, releases every claim the batch won or may have written before it throws. Otherwise the keys it won would
 * stay held for a whole lease with no caller that knows of them. The releases are owner-checked, so a put whose
 * outcome is unknown is released when it was written and left alone when it was not. A release that fails too is
 * counted in the exception's message and attached to it as suppressed: that key stays held until its lease ends.
 */
final class DynamoDbBatchSettlement {
    private final DynamoDbDedupStore store;
    private final Map<String, String> ownerByKey;
    private final Duration lease;

    DynamoDbBatchSettlement(DynamoDbDedupStore store, Map<String, String> ownerByKey, Duration lease) {
        this.store = store;
        this.ownerByKey = ownerByKey;
        this.lease = lease;
    }

    Map<String, ClaimResult> settle(Map<String, CompletableFuture<ClaimResult>> pending) {
        Map<String, ClaimResult> results = new HashMap<>();
        Map<String, Throwable> failures = new LinkedHashMap<>();
        pending.forEach((key, claim) -> {
            try {
                results.put(key, claim.join());
            } catch (CompletionException | CancellationException e) {
                failures.put(key, e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
            }
        });
        if (failures.isEmpty()) {
            return results;
        }
        DedupException cause = DynamoDbErrors.translate("claimAll", failures.values().iterator().next(),
                store.table());
        int won = 0;
        List<RuntimeException> releaseFailures = new ArrayList<>();
        for (Map.Entry<String, String> entry : ownerByKey.entrySet()) {
            String key = entry.getKey();
            boolean claimed = results.get(key) instanceof Claim;
            if (!claimed && !failures.containsKey(key)) {
                continue; // a duplicate, or never sent
            }
            won += claimed ? 1 : 0;
            try {
                // An unknown outcome is released by owner: a no-op when that put was never written.
                store.release(new Claim(store.namespace(), key, entry.getValue(), Instant.now().plus(lease)));
            } catch (DedupException | IllegalStateException e) {
                releaseFailures.add(e);
            }
        }
        DedupException failure = cause instanceof DedupStoreException storeFailure
                ? new DedupStoreException(DynamoDbDedupStore.STORE + " claimAll failed on " + failures.size() + " of "
                        + ownerByKey.size() + " keys (" + cause.getMessage() + "); it released the " + won
                        + " claims it had won and any it may have written" + (releaseFailures.isEmpty() ? ""
                        : ", except " + releaseFailures.size() + " it could not release (held until their lease"
                                + " ends; see the suppressed exceptions)"), cause, storeFailure.isRetryable())
                : cause; // a configuration error (the table is gone): no retry will help, say so as it is
        releaseFailures.forEach(failure::addSuppressed);
        throw failure;
    }
}
