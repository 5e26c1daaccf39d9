package dev.dedup.store.redis;

import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import dev.dedup.Settlement;
import io.lettuce.core.ScriptOutputType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One {@code settleAll} on Redis: one {@link RedisScripts#SETTLE_ALL} call per group of keys (the whole batch on a
 * standalone server, a slot's keys on a Cluster, grouped as {@link RedisClaimBatch#groups} groups a claim batch),
 * all sent at once, each under {@link RedisAsyncCall}'s rules (NOSCRIPT, resends after a lost reply flagged so the
 * scripts recognise their owner's earlier outcome, one deadline for the batch). The blocking call waits for the
 * same calls, so both paths settle alike.
 */
final class RedisSettleBatch {
    private static final byte[] RELEASE = {'R'};
    private static final byte[] FIRST = {'0'};
    private static final byte[] RESEND = {'1'};
    private static final byte[] NONE = {};
    private static final byte[] ABSENT = {'0'};
    private static final byte[] PRESENT = {'1'};

    private final RedisDedupStore store;
    private final List<Settlement> settlements;

    RedisSettleBatch(RedisDedupStore store, List<Settlement> settlements) {
        this.store = store;
        this.settlements = settlements;
    }

    /** Sends every group's script now; {@return a stage with one answer per settlement, in input order} */
    @SuppressWarnings("unchecked") // the script's reply: one integer per key
    CompletableFuture<List<Boolean>> start() {
        Map<String, Settlement> byKey = new LinkedHashMap<>();
        settlements.forEach(settlement -> byKey.put(settlement.claim().key(), settlement));
        long deadline = store.calls().deadline();
        Map<List<String>, CompletableFuture<List<Object>>> sent = new LinkedHashMap<>();
        for (List<String> group : RedisClaimBatch.groups(store, byKey.keySet())) {
            RedisCalls.Arguments arguments = arguments(group.stream().map(byKey::get).toList());
            sent.put(group, RedisAsyncCall.start(store.calls(), store.topology().routed(), RedisScripts.SETTLE_ALL,
                    ScriptOutputType.MULTI, store.redisKeys(group), arguments, "settleAll", deadline,
                    store.topology().timer()));
        }
        return CompletableFuture.allOf(sent.values().toArray(CompletableFuture[]::new)).thenApply(all -> {
            Map<String, Boolean> settled = new HashMap<>();
            sent.forEach((group, reply) -> {
                List<Object> answers = reply.join();
                for (int i = 0; i < group.size(); i++) {
                    settled.put(group.get(i), RedisDedupStore.done((Long) answers.get(i)));
                }
            });
            return settlements.stream().map(settlement -> settled.get(settlement.claim().key())).toList();
        });
    }

    /**
     * Waits for {@link #start()}'s stage: each call ends by the batch's deadline on the client's timer, and the wait
     * is bounded a second past it all the same.
     */
    List<Boolean> run() {
        CompletableFuture<List<Boolean>> answers = start();
        try {
            return answers.get(store.calls().timeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                    ? e.getCause().getCause() : e.getCause();
            throw cause instanceof DedupException dedup ? dedup : RedisErrors.translate("settleAll", cause);
        } catch (TimeoutException e) {
            throw RedisErrors.translate("settleAll", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DedupStoreException("Redis dedup store call interrupted", e, true);
        }
    }

    /** {@link RedisScripts#SETTLE_ALL}'s arguments for {@code group}: the resend flag, then five per settlement. */
    private static RedisCalls.Arguments arguments(List<Settlement> group) {
        byte[][] arguments = new byte[1 + group.size() * RedisScripts.SETTLE_ARGUMENTS][];
        for (int i = 0; i < group.size(); i++) {
            Settlement settlement = group.get(i);
            int at = 1 + i * RedisScripts.SETTLE_ARGUMENTS;
            byte[] payload = settlement.payload();
            arguments[at] = ascii(settlement.claim().owner());
            arguments[at + 1] = settlement.kind() == Settlement.Kind.RELEASE ? RELEASE
                    : RedisRecord.code(settlement.endState());
            arguments[at + 2] = settlement.kind() == Settlement.Kind.RELEASE ? NONE
                    : ascii(Long.toString(settlement.retention().toMillis()));
            arguments[at + 3] = payload == null ? ABSENT : PRESENT;
            arguments[at + 4] = payload == null ? NONE : payload;
        }
        return resend -> {
            byte[][] attempt = arguments.clone();
            attempt[0] = resend ? RESEND : FIRST;
            return attempt;
        };
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
