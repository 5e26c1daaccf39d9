package dev.dedup.store.redis;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * One {@code claimAll}: one script claims a whole group of keys (the batch on a standalone server, a slot's keys on a
 * Cluster), every group goes out before any reply is read (Lettuce pipelines them, one round trip per node), a group
 * whose reply was lost is claimed again key by key, and a batch that cannot finish gives back the keys it won, so a
 * failed batch does not leave them held for a whole lease.
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
        Map<List<String>, RedisFuture<List<Object>>> sent = new LinkedHashMap<>();
        Map<String, ClaimResult> results = new LinkedHashMap<>();
        List<String> unknown = new ArrayList<>();
        DedupException firstFailure = null;
        for (List<String> group : groups(store, ownerByKey.keySet())) {
            try {
                RedisClusterAsyncCommands<String, byte[]> commands = store.claimConnection(group.get(0));
                group.forEach(key -> connectionOf.put(key, commands));
                sent.put(group, group.size() == 1
                        ? store.sendClaim(commands, group.get(0), ownerByKey.get(group.get(0)), lease)
                        : sendAll(commands, group, false));
            } catch (DedupException e) {
                firstFailure = firstFailure == null ? e : firstFailure; // never sent: not held
            }
        }
        for (Map.Entry<List<String>, RedisFuture<List<Object>>> entry : sent.entrySet()) {
            List<String> group = entry.getKey();
            Replies replies;
            try {
                replies = receive(group, connectionOf.get(group.get(0)), entry.getValue());
            } catch (DedupException e) {
                firstFailure = firstFailure == null ? e : firstFailure;
                if (!(e instanceof DedupStoreException failure) || failure.isRetryable()) {
                    unknown.addAll(group); // it may have run: the keys may be held until their lease ends
                }
                continue;
            }
            for (int i = 0; i < group.size(); i++) {
                String key = group.get(i);
                try {
                    results.put(key, replies.each() != null
                            ? store.claimResult(key, ownerByKey.get(key), replies.each().get(i))
                            : store.claimOn(connectionOf.get(key), key, ownerByKey.get(key), lease, null, deadline,
                                    replies.lostReply()));
                } catch (DedupException e) {
                    firstFailure = firstFailure == null ? e : firstFailure;
                    if (!(e instanceof DedupStoreException failure) || failure.isRetryable()) {
                        unknown.add(key);
                    }
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

    /**
     * The keys in script-sized groups: all of them on a standalone server; on a Cluster, one group per slot, since
     * a script's keys must share one (keys of one namespace do with {@code hashTagNamespace}).
     */
    static List<List<String>> groups(RedisDedupStore store, Collection<String> keys) {
        if (!store.cluster()) {
            return List.of(List.copyOf(keys));
        }
        Map<Integer, List<String>> bySlot = new LinkedHashMap<>();
        for (String key : keys) {
            bySlot.computeIfAbsent(SlotHash.getSlot(store.redisKey(key)), slot -> new ArrayList<>()).add(key);
        }
        return List.copyOf(bySlot.values());
    }

    /**
     * A group's replies, one per key; or none ({@code each} null) when the script did not run (NOSCRIPT) or may have
     * run in part or whole ({@code lostReply}: its reply was lost, or it stopped at an error): then each key is
     * claimed again on its own, and the claim script recognises a record its own owner left.
     */
    private record Replies(List<List<Object>> each, boolean lostReply) {}

    private RedisFuture<List<Object>> sendAll(RedisClusterAsyncCommands<String, byte[]> commands, List<String> group,
            boolean withSource) {
        return store.sendClaimAll(commands, group, group.stream().map(ownerByKey::get).toList(), lease, withSource);
    }

    @SuppressWarnings("unchecked")
    private Replies receive(List<String> group, RedisClusterAsyncCommands<String, byte[]> commands,
            RedisFuture<List<Object>> reply) {
        try {
            List<Object> replies = store.calls().await(reply, deadline);
            return new Replies(group.size() == 1 ? List.of(replies)
                    : replies.stream().map(one -> (List<Object>) one).toList(), false);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            boolean lostReply = RedisCalls.isConnectionLoss(cause);
            if (cause instanceof RedisNoScriptException) {
                // Not run: the node has not cached the batch script yet. Send it once in full, which caches it.
                return group.size() == 1 ? new Replies(null, false)
                        : receive(group, commands, sendAll(commands, group, true));
            }
            if (lostReply || group.size() > 1) {
                // A script stopped by one key's error (a value of another type) has set the keys before it: claim
                // each on its own, so that key fails alone and the others are recognised as this batch's.
                return new Replies(null, true);
            }
            throw RedisErrors.translate("claimAll", cause);
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
