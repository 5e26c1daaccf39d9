package dev.dedup.store.redis;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.spi.AbstractDedupStore;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A {@link dev.dedup.spi.DedupStore} on Redis, standalone or Cluster, through Lettuce.
 *
 * <p>A claim is one command, {@code SET key record NX PX lease GET}: it sets the key only if absent, with a
 * server-side expiry, and returns the existing record when the key is taken, so a duplicate's state and result
 * come back in the same round trip. Never SETNX then EXPIRE: a crash between them leaves a key that never expires.
 * Redis's own clock enforces every expiry; the instants reported in claims are this process's estimate.
 * Complete, release and extend are Lua scripts that check the owner token and write in one atomic step.
 *
 * <pre>{@code
 * StatefulRedisConnection<String, byte[]> connection = redisClient.connect(RedisDedupStore.CODEC);
 * RedisDedupStore store = RedisDedupStore.builder(connection).namespace("orders").build();
 * }</pre>
 */
public final class RedisDedupStore extends AbstractDedupStore {
    /** The codec the store's connection must use: UTF-8 keys, binary values. */
    public static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    private final RedisClusterAsyncCommands<String, byte[]> commands;
    private final Function<String, RedisClusterAsyncCommands<String, byte[]>> nodeOfKey;
    private final String keyPrefix;
    private final Duration timeout;
    private final int replicas;
    private final Duration replicaTimeout;
    private final Clock clock;
    private final Runnable onClose;
    private final String replaceSha = sha1(RedisScripts.REPLACE);
    private final String deleteSha = sha1(RedisScripts.DELETE);

    private RedisDedupStore(Builder builder) {
        super(builder.namespace);
        this.commands = builder.commands;
        this.nodeOfKey = builder.nodeOfKey;
        String namespacePart = builder.hashTagNamespace ? "{" + builder.namespace + "}" : builder.namespace;
        this.keyPrefix = builder.keyPrefix + ":" + namespacePart + ":";
        this.timeout = builder.timeout;
        this.replicas = builder.replicas;
        this.replicaTimeout = builder.replicaTimeout;
        this.clock = builder.clock;
        this.onClose = builder.onClose;
    }

    /** A store on a standalone connection opened with {@link #CODEC}; the connection stays the caller's. */
    public static Builder builder(StatefulRedisConnection<String, byte[]> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(connection.async(), key -> connection.async());
    }

    /** A store on a Redis Cluster connection opened with {@link #CODEC}; the connection stays the caller's. */
    public static Builder builder(StatefulRedisClusterConnection<String, byte[]> connection) {
        Objects.requireNonNull(connection, "connection");
        // WAIT counts the replicas of the node that took the write, on that node's own connection.
        return new Builder(connection.async(), key -> {
            RedisClusterNode master = connection.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
            return connection.getConnection(master.getNodeId()).async();
        });
    }

    /** The Redis key that holds {@code key}: {@code prefix:namespace:key}, or {@code prefix:{namespace}:key}. */
    public String redisKey(String key) {
        return keyPrefix + key;
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease) {
        return finish(key, owner, send(key, owner, lease));
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        // All SETs go out before any reply is awaited: Lettuce pipelines them, one round trip per node touched.
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        Map<String, Pending> sent = new LinkedHashMap<>();
        ownerByKey.forEach((key, owner) -> sent.put(key, send(key, owner, lease)));
        Map<String, ClaimResult> byKey = new LinkedHashMap<>();
        sent.forEach((key, pending) -> byKey.put(key, finish(key, ownerByKey.get(key), pending)));

        return inInputOrder(keys, byKey);
    }

    /** A SET on its way, with the expiry its record carries. */
    private record Pending(RedisFuture<byte[]> reply, Instant expiresAt) {}

    private Pending send(String key, String owner, Duration lease) {
        // Whole milliseconds, as the record stores it: the claim reports exactly what a duplicate will read back.
        Instant expiresAt = Instant.ofEpochMilli(clock.millis() + lease.toMillis());
        byte[] record = RedisRecord.inProgress(owner, expiresAt).encode();
        return new Pending(commands.setGet(redisKey(key), record, SetArgs.Builder.nx().px(lease.toMillis())),
                expiresAt);
    }

    private ClaimResult finish(String key, String owner, Pending pending) {
        byte[] previous = await(pending.reply(), "claim");
        if (previous != null) {
            RedisRecord existing = RedisRecord.decode(previous);
            return new Duplicate(key, existing.state(), existing.expiresAt(), existing.result());
        }
        Claim claim = new Claim(namespace(), key, owner, pending.expiresAt());
        if (replicas > 0) {
            awaitReplicas(claim);
        }
        return claim;
    }

    private byte[] recordOf(String owner, Duration lease) {
        return RedisRecord.inProgress(owner, clock.instant().plus(lease)).encode();
    }

    /** Fails the claim, and frees the key, unless enough replicas acknowledged it in time. */
    private void awaitReplicas(Claim claim) {
        String redisKey = redisKey(claim.key());
        Long acknowledged = await(nodeOfKey.apply(redisKey).waitForReplication(replicas, replicaTimeout.toMillis()),
                "claim (WAIT)");
        if (acknowledged == null || acknowledged < replicas) {
            doRelease(claim);
            throw new DedupStoreException("Redis dedup store claim reached " + acknowledged + " of " + replicas
                    + " replicas within " + replicaTimeout + "; the claim was released", null, true);
        }
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        byte[] record = new RedisRecord(outcome, clock.instant().plus(retention), claim.owner(), payload).encode();
        return script(replaceSha, RedisScripts.REPLACE, claim, outcome == RecordState.FAILED ? "fail" : "complete",
                record, millis(retention));
    }

    @Override
    protected boolean doRelease(Claim claim) {
        return script(deleteSha, RedisScripts.DELETE, claim, "release");
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        return script(replaceSha, RedisScripts.REPLACE, claim, "extend", recordOf(claim.owner(), lease), millis(lease));
    }

    @Override
    protected void doClose() {
        onClose.run();
    }

    /** Runs a script by its hash; a server that has not cached it yet (NOSCRIPT) gets the source once. */
    private boolean script(String sha, String source, Claim claim, String operation, byte[]... extra) {
        String[] keys = {redisKey(claim.key())};
        byte[][] args = new byte[extra.length + 1][];
        args[0] = claim.owner().getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(extra, 0, args, 1, extra.length);
        Long done;
        try {
            done = awaitRaw(commands.evalsha(sha, ScriptOutputType.INTEGER, keys, args));
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof RedisNoScriptException)) {
                throw RedisErrors.translate(operation, e.getCause());
            }
            done = await(commands.eval(source, ScriptOutputType.INTEGER, keys, args), operation);
        } catch (TimeoutException e) {
            throw RedisErrors.translate(operation, e);
        }
        return done != null && done == 1L;
    }

    private <T> T await(RedisFuture<T> future, String operation) {
        try {
            return awaitRaw(future);
        } catch (ExecutionException e) {
            throw RedisErrors.translate(operation, e.getCause());
        } catch (TimeoutException e) {
            throw RedisErrors.translate(operation, e);
        }
    }

    private <T> T awaitRaw(RedisFuture<T> future) throws ExecutionException, TimeoutException {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true); // do not leave it queued while the server is away
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(true);
            throw new DedupStoreException("Redis dedup store call interrupted", e, true);
        }
    }

    private static byte[] millis(Duration duration) {
        return Long.toString(duration.toMillis()).getBytes(StandardCharsets.US_ASCII);
    }

    private static String sha1(String script) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(script.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required on every Java platform", e);
        }
    }

    /** Settings for a {@link RedisDedupStore}; each setter checks its value at once. */
    public static final class Builder {
        private final RedisClusterAsyncCommands<String, byte[]> commands;
        private final Function<String, RedisClusterAsyncCommands<String, byte[]>> nodeOfKey;
        private String namespace = DedupLimits.DEFAULT_NAMESPACE;
        private String keyPrefix = "dedup";
        private boolean hashTagNamespace;
        private Duration timeout = Duration.ofSeconds(2);
        private int replicas;
        private Duration replicaTimeout = Duration.ofMillis(100);
        private Clock clock = Clock.systemUTC();
        private Runnable onClose = () -> {};

        private Builder(RedisClusterAsyncCommands<String, byte[]> commands,
                Function<String, RedisClusterAsyncCommands<String, byte[]>> nodeOfKey) {
            this.commands = commands;
            this.nodeOfKey = nodeOfKey;
        }

        public Builder namespace(String namespace) {
            this.namespace = DedupLimits.checkNamespace(namespace);
            return this;
        }

        /** The first part of every key (default {@code dedup}): 1 to 64 of {@code A-Z a-z 0-9 . _ : -}. */
        public Builder keyPrefix(String keyPrefix) {
            if (keyPrefix == null || !PREFIX.matcher(keyPrefix).matches()) {
                throw new IllegalArgumentException("keyPrefix must be 1 to 64 of A-Z a-z 0-9 . _ : -, but was "
                        + (keyPrefix == null ? "null" : "'" + keyPrefix + "'"));
            }
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * Puts the namespace in a hash tag ({@code dedup:{orders}:key}), so on a Cluster all of a namespace's keys
         * share one slot: multi-key operations work, at the price of one node holding the whole namespace.
         */
        public Builder hashTagNamespace(boolean hashTagNamespace) {
            this.hashTagNamespace = hashTagNamespace;
            return this;
        }

        /** How long one call may take before it fails with a retryable DedupStoreException (default 2 s). */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.compareTo(Duration.ofMillis(10)) < 0 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("timeout must be in [PT0.01S, PT5M], but was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * After each won claim, waits (Redis {@code WAIT}) until {@code replicas} replicas have it, at most
         * {@code timeout}; fewer fails the claim (and frees the key). This narrows, but cannot close, the window
         * in which a failover loses a claim: replication stays asynchronous. Default 0: no waiting.
         */
        public Builder waitForReplicas(int replicas, Duration timeout) {
            if (replicas < 0 || replicas > 16) {
                throw new IllegalArgumentException("replicas must be in [0, 16], but was " + replicas);
            }
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("replica timeout must be positive, but was " + timeout);
            }
            this.replicas = replicas;
            this.replicaTimeout = timeout;
            return this;
        }

        /** The clock for the expiry instants the store reports (Redis enforces expiry on its own clock). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Runs when the store closes: the provider closes the client it created. */
        Builder onClose(Runnable onClose) {
            this.onClose = onClose;
            return this;
        }

        public RedisDedupStore build() {
            return new RedisDedupStore(this);
        }
    }

}
