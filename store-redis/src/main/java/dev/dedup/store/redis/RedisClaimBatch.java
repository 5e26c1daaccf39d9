package dev.dedup.store.redis;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * One {@code claimAll}: every claim goes out before any reply is read (Lettuce pipelines them, one round trip per
 * node), a claim whose reply was lost is resent on its own, and a batch that cannot finish gives back the keys it
 * won, so a failed batch does not leave them held for a whole lease.
 */
final class RedisClaimBatch {
    private static final int KEYS_SHOWN = 20;

    private final RedisDedupStore store;
    private final Map<String, String> ownerByKey;
    private final Duration lease;
    private final long deadline;

    RedisClaimBatch(RedisDedupStore store, Map<String, String> ownerByKey, Duration lease, long deadline) {
        this.store = store;
        this.ownerByKey = ownerByKey;
        this.lease = lease;
        this.deadline = deadline;
    }

    /** One result per distinct key, in first-seen order. */
    Map<String, ClaimResult> run() {
        Map<String, RedisClusterAsyncCommands<String, byte[]>> connectionOf = new LinkedHashMap<>();
        Map<String, RedisFuture<List<Object>>> sent = new LinkedHashMap<>();
        Map<String, ClaimResult> results = new LinkedHashMap<>();
        List<String> unknown = new ArrayList<>();
        DedupException firstFailure = null;
        for (Map.Entry<String, String> entry : ownerByKey.entrySet()) {
            try {
                RedisClusterAsyncCommands<String, byte[]> commands = store.claimConnection(entry.getKey());
                connectionOf.put(entry.getKey(), commands);
                sent.put(entry.getKey(), store.sendClaim(commands, entry.getKey(), entry.getValue(), lease));
            } catch (DedupException e) {
                firstFailure = firstFailure == null ? e : firstFailure; // never sent: not held
            }
        }
        for (Map.Entry<String, RedisFuture<List<Object>>> entry : sent.entrySet()) {
            String key = entry.getKey();
            try {
                results.put(key, receive(key, connectionOf.get(key), entry.getValue()));
            } catch (DedupException e) {
                firstFailure = firstFailure == null ? e : firstFailure;
                if (!(e instanceof DedupStoreException failure) || failure.isRetryable()) {
                    unknown.add(key); // it may have run: the key may be held until its lease ends
                }
            }
        }
        if (firstFailure != null) {
            throw giveBack(results, unknown, firstFailure);
        }
        if (store.waitsForReplicas()) {
            awaitReplicas(results, connectionOf);
        }
        return results;
    }

    private ClaimResult receive(String key, RedisClusterAsyncCommands<String, byte[]> commands,
            RedisFuture<List<Object>> reply) {
        try {
            return store.claimResult(key, ownerByKey.get(key), store.calls().await(reply, deadline));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            boolean lostReply = RedisCalls.isConnectionLoss(cause);
            if (!lostReply && !(cause instanceof RedisNoScriptException)) {
                throw RedisErrors.translate("claimAll", cause);
            }
            // NOSCRIPT (not run) or a lost reply (maybe run): claim this key again on its own.
            return store.claimOn(commands, key, ownerByKey.get(key), lease, null, deadline, lostReply);
        } catch (TimeoutException e) {
            throw RedisErrors.translate("claimAll", e);
        }
    }

    private void awaitReplicas(Map<String, ClaimResult> results,
            Map<String, RedisClusterAsyncCommands<String, byte[]>> connectionOf) {
        Map<Claim, RedisClusterAsyncCommands<String, byte[]>> won = new LinkedHashMap<>();
        results.forEach((key, result) -> {
            if (result instanceof Claim claim) {
                won.put(claim, connectionOf.get(key));
            }
        });
        for (Map.Entry<RedisClusterAsyncCommands<String, byte[]>, List<Claim>> group
                : RedisDedupStore.byConnection(won).entrySet()) {
            try {
                store.awaitReplicas(group.getKey(), group.getValue()); // releases its own group on failure
            } catch (DedupException e) {
                List<Claim> others = new ArrayList<>(won.keySet());
                others.removeAll(group.getValue());
                throw failure(e, store.releaseQuietly(others));
            }
        }
    }

    /** Releases every key the batch won and describes what may still be held. */
    private DedupException giveBack(Map<String, ClaimResult> results, List<String> unknown, DedupException cause) {
        List<Claim> won = new ArrayList<>();
        results.values().forEach(result -> {
            if (result instanceof Claim claim) {
                won.add(claim);
            }
        });
        List<String> mayBeHeld = new ArrayList<>(unknown);
        mayBeHeld.addAll(store.releaseQuietly(won));
        return failure(cause, mayBeHeld);
    }

    private DedupException failure(DedupException cause, List<String> mayBeHeld) {
        if (!(cause instanceof DedupStoreException storeFailure)) {
            return cause; // a configuration error (a foreign value under the prefix) stays what it is
        }
        String shown = mayBeHeld.size() <= KEYS_SHOWN ? mayBeHeld.toString()
                : mayBeHeld.subList(0, KEYS_SHOWN) + " and " + (mayBeHeld.size() - KEYS_SHOWN) + " more";
        return new DedupStoreException("Redis dedup store claimAll of " + ownerByKey.size() + " keys failed ("
                + storeFailure.getMessage() + "); the keys it had won were released, best effort; keys that may stay"
                + " held until their lease ends: " + (mayBeHeld.isEmpty() ? "none" : shown), cause,
                storeFailure.isRetryable());
    }
}
