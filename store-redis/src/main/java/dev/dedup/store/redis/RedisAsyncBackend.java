package dev.dedup.store.redis;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * The Redis store's non-blocking calls: the same scripts, arguments and reply readers as the blocking ones (shared
 * with {@link RedisDedupStore}), sent on Lettuce's async commands and finished in its reply callbacks, so no thread
 * waits. A batch sends every key's claim before any reply arrives (Lettuce pipelines them) and, as the blocking
 * batch does, gives back the keys it won when any key fails.
 */
final class RedisAsyncBackend implements AsyncBackend {
    private final RedisDedupStore store;

    RedisAsyncBackend(RedisDedupStore store) {
        this.store = store;
    }

    @Override
    public CompletableFuture<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
        return claim(key, AbstractDedupStore.newOwnerToken(), lease, fingerprint);
    }

    private CompletableFuture<ClaimResult> claim(String key, String owner, Duration lease, byte[] fingerprint) {
        RedisClusterAsyncCommands<String, byte[]> commands = store.claimConnection(key);
        CompletableFuture<ClaimResult> claimed = this.<List<Object>>run(commands, RedisScripts.CLAIM,
                ScriptOutputType.MULTI, key, again -> RedisDedupStore.claimArguments(owner, lease, fingerprint),
                "claim").thenApply(reply -> store.claimResult(key, owner, reply));
        return store.waitsForReplicas() ? claimed.thenCompose(result -> result instanceof Claim claim
                ? awaitReplicas(commands, claim).thenApply(acknowledged -> result)
                : CompletableFuture.completedFuture(result)) : claimed;
    }

    /** As {@link RedisDedupStore#awaitReplicas}, for one claim: too few replicas release it and fail the claim. */
    private CompletableFuture<Void> awaitReplicas(RedisClusterAsyncCommands<String, byte[]> commands, Claim claim) {
        CompletableFuture<Long> waited = new CompletableFuture<>();
        commands.waitForReplication(store.replicas(), store.replicaTimeout().toMillis())
                .whenComplete((count, failure) -> {
                    if (failure == null) {
                        waited.complete(count);
                    } else {
                        waited.completeExceptionally(failure);
                    }
                });
        // The blocking path's bound: the server's WAIT timeout plus the call's own.
        RedisAsyncCall.within(waited, store.replicaTimeout().plus(store.calls().timeout()), store.topology().timer(),
                () -> waited.completeExceptionally(new TimeoutException("no WAIT reply in time")));
        return waited.handle((acknowledged, failure) -> {
            if (failure == null && !store.tooFewReplicas(acknowledged)) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            DedupException why = failure != null ? RedisErrors.translate("claim (WAIT)", unwrap(failure))
                    : store.replicaShortfall(acknowledged);
            return release(claim).handle((released, ignored) -> (Void) null)
                    .thenCompose(ignored -> CompletableFuture.<Void>failedFuture(why));
        }).thenCompose(stage -> stage);
    }

    @Override
    public CompletableFuture<Boolean> finish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        return replace(claim, RedisDedupStore.replaceArguments(claim, outcome, retention, payload),
                RedisDedupStore.finishName(outcome));
    }

    @Override
    public CompletableFuture<Boolean> extend(Claim claim, Duration lease) {
        return replace(claim, RedisDedupStore.replaceArguments(claim, RecordState.IN_PROGRESS, lease, null),
                "extend");
    }

    private CompletableFuture<Boolean> replace(Claim claim, RedisCalls.Arguments arguments, String operation) {
        return this.<Long>run(store.topology().routed(), RedisScripts.REPLACE, ScriptOutputType.INTEGER,
                claim.key(), arguments, operation).thenApply(RedisDedupStore::done);
    }

    @Override
    public CompletableFuture<Boolean> release(Claim claim) {
        return this.<Long>run(store.topology().routed(), RedisScripts.RELEASE, ScriptOutputType.INTEGER,
                claim.key(), RedisDedupStore.releaseArguments(claim), "release").thenApply(RedisDedupStore::done);
    }

    @Override
    public CompletableFuture<List<Boolean>> settleAll(List<Settlement> settlements) {
        return new RedisSettleBatch(store, settlements).start();
    }

    @Override
    public CompletableFuture<KeyRecord> inspect(String key) {
        return this.<List<Object>>run(store.topology().routed(), RedisScripts.INSPECT, ScriptOutputType.MULTI, key,
                resend -> new byte[0][], "inspect").thenApply(reply -> RedisDedupStore.inspectResult(key, reply));
    }

    @Override
    public CompletableFuture<Boolean> forget(String key) {
        return this.<Long>run(store.topology().routed(), RedisScripts.FORGET, ScriptOutputType.INTEGER, key,
                resend -> new byte[0][], "forget").thenApply(RedisDedupStore::done);
    }

    @Override
    public CompletableFuture<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
        Map<String, String> ownerByKey = AbstractDedupStore.ownersOfDistinctKeys(keys);
        long deadline = store.calls().deadline();
        Map<String, CompletableFuture<ClaimResult>> byKey = new LinkedHashMap<>();
        if (store.waitsForReplicas()) {
            // Each claim waits for its replicas, as a single claim does.
            ownerByKey.forEach((key, owner) -> byKey.put(key, claimOrFail(key, owner, lease)));
        } else {
            for (List<String> group : RedisClaimBatch.groups(store, ownerByKey.keySet())) {
                claimGroup(group, ownerByKey, lease, deadline, byKey);
            }
        }
        return CompletableFuture.allOf(byKey.values().toArray(CompletableFuture[]::new)).handle((all, failure) -> {
            Map<String, ClaimResult> results = new LinkedHashMap<>();
            byKey.forEach((key, reply) -> {
                if (!reply.isCompletedExceptionally()) {
                    results.put(key, reply.join());
                }
            });
            if (failure == null) {
                return CompletableFuture.completedFuture(AbstractDedupStore.inInputOrder(keys, results));
            }
            return giveBack(results, byKey.size(), unwrap(failure));
        }).thenCompose(stage -> stage);
    }

    /**
     * One script for a group of keys (the batch on a standalone server, a slot's keys on a Cluster), as the blocking
     * batch sends it. When the script fails (a lost reply past its resends, or an error one key's value raised
     * mid-script), each key is claimed on its own before the deadline: the claim script recognises a record the
     * batch already wrote as its owner's, and a bad key fails alone.
     */
    @SuppressWarnings("unchecked") // the script's reply: one claim reply (a list) per key
    private void claimGroup(List<String> group, Map<String, String> ownerByKey, Duration lease, long deadline,
            Map<String, CompletableFuture<ClaimResult>> byKey) {
        if (group.size() == 1) {
            String key = group.get(0);
            byKey.put(key, claimOrFail(key, ownerByKey.get(key), lease));
            return;
        }
        List<String> owners = group.stream().map(ownerByKey::get).toList();
        byte[][] arguments = RedisDedupStore.claimAllArguments(owners, lease);
        CompletableFuture<List<Object>> replies;
        try {
            replies = RedisAsyncCall.start(store.calls(), store.claimConnection(group.get(0)), RedisScripts.CLAIM_ALL,
                    ScriptOutputType.MULTI, store.redisKeys(group), resend -> arguments, "claimAll", deadline,
                    store.topology().timer());
        } catch (RuntimeException e) {
            replies = CompletableFuture.failedFuture(e); // no master known for the slot: nothing was sent
        }
        for (int i = 0; i < group.size(); i++) {
            String key = group.get(i);
            int index = i;
            byKey.put(key, replies.handle((reply, failure) -> {
                if (failure == null) {
                    return CompletableFuture.completedFuture(
                            store.claimResult(key, owners.get(index), (List<Object>) reply.get(index)));
                }
                return deadline - System.nanoTime() > 0 ? claimOrFail(key, owners.get(index), lease)
                        : CompletableFuture.<ClaimResult>failedFuture(unwrap(failure));
            }).thenCompose(stage -> stage));
        }
    }

    /** A claim whose synchronous failure (no master known for the slot) fails its stage instead. */
    private CompletableFuture<ClaimResult> claimOrFail(String key, String owner, Duration lease) {
        try {
            return claim(key, owner, lease, null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Releases the keys a failed batch won, best effort, then fails the batch as the blocking one does. */
    private CompletableFuture<List<ClaimResult>> giveBack(Map<String, ClaimResult> results, int keys,
            Throwable cause) {
        List<CompletableFuture<Boolean>> releases = new ArrayList<>();
        results.values().forEach(result -> {
            if (result instanceof Claim claim) {
                releases.add(release(claim));
            }
        });
        return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)).handle((ignored, releaseFailure) -> {
            if (!(cause instanceof DedupStoreException storeFailure)) {
                throw new CompletionException(cause); // a configuration error stays what it is
            }
            throw new CompletionException(new DedupStoreException("Redis dedup store claimAll of " + keys
                    + " keys failed (" + storeFailure.getMessage() + "); the keys it had won were released, best"
                    + " effort" + (releaseFailure == null ? "" : ", and some may stay held until their lease ends"),
                    cause, storeFailure.isRetryable()));
        });
    }

    private <T> CompletableFuture<T> run(RedisClusterAsyncCommands<String, byte[]> commands,
            RedisScripts.Script script, ScriptOutputType type, String key, RedisCalls.Arguments arguments,
            String operation) {
        return RedisAsyncCall.start(store.calls(), commands, script, type, store.redisKey(key), arguments, operation,
                store.topology().timer());
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
