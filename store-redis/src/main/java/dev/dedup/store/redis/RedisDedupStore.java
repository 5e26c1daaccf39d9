package dev.dedup.store.redis;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupLimits;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/**
 * A {@link dev.dedup.DedupStore} on Redis, standalone or Cluster, through Lettuce.
 *
 * <p>Every operation is one Lua script (see {@link RedisScripts}): a claim sets the key only if absent, with a
 * server-side expiry, and returns the existing record and its remaining time when the key is taken, so a
 * duplicate's state, result and expiry come back in the same round trip. Every expiry the store reports is the one
 * Redis enforces, read from Redis's own clock. A batch of claims or of settlements is one script per hash slot (one
 * in all on a standalone server). A call whose reply is lost to a dropped connection is sent again within the
 * timeout and recognises its own owner's earlier outcome.
 *
 * <pre>{@code
 * StatefulRedisConnection<String, byte[]> connection = redisClient.connect(RedisDedupStore.CODEC);
 * RedisDedupStore store = RedisDedupStore.builder(connection).namespace("orders").build();
 * }</pre>
 */
public final class RedisDedupStore extends AbstractDedupStore {
    /** The codec the store's connection must use: UTF-8 keys, binary values. */
    public static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    // No ':' (the separator) and no braces: 'a:b' + namespace 'c' would share keys with 'a' + namespace 'b:c'.
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final byte[] FIRST = {'0'};
    private static final byte[] RESEND = {'1'};
    private static final RedisCalls.Arguments NO_ARGUMENTS = resend -> new byte[0][];

    private final RedisTopology topology;
    private final String keyPrefix;
    private final RedisCalls calls;
    private final int replicas;
    private final Duration replicaTimeout;
    private final Runnable onClose;

    private RedisDedupStore(Builder builder) {
        super(builder.namespace);
        this.topology = builder.topology;
        String namespacePart = builder.hashTagNamespace ? "{" + builder.namespace + "}" : builder.namespace;
        this.keyPrefix = builder.keyPrefix + ":" + namespacePart + ":";
        this.calls = new RedisCalls(builder.timeout);
        this.replicas = builder.replicas;
        this.replicaTimeout = builder.replicaTimeout;
        this.onClose = builder.onClose;
    }

    /**
     * A store on a standalone connection opened with {@link #CODEC}; the connection stays the caller's.
     *
     * @param connection a connection to the master, opened with {@link #CODEC}; the store never closes it
     * @return a builder for namespace {@code default}, key prefix {@code dedup} and a 2 s timeout
     */
    public static Builder builder(StatefulRedisConnection<String, byte[]> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(RedisTopology.standalone(connection));
    }

    /**
     * A store on a Redis Cluster connection opened with {@link #CODEC}; the connection stays the caller's.
     *
     * @param connection a Cluster connection opened with {@link #CODEC}; the store never closes it
     * @return a builder for namespace {@code default}, key prefix {@code dedup} and a 2 s timeout
     */
    public static Builder builder(StatefulRedisClusterConnection<String, byte[]> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(RedisTopology.cluster(connection));
    }

    /**
     * Names the Redis key that holds a dedup key, for inspecting records with {@code redis-cli}.
     *
     * @param key a dedup key, without namespace
     * @return {@code prefix:namespace:key}, or {@code prefix:{namespace}:key} with {@link Builder#hashTagNamespace}
     */
    public String redisKey(String key) {
        return keyPrefix + key;
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        long deadline = calls.deadline();
        RedisClusterAsyncCommands<String, byte[]> commands = claimConnection(key);
        ClaimResult result = claimOn(commands, key, owner, lease, fingerprint, deadline, false);
        if (result instanceof Claim claim && replicas > 0) {
            awaitReplicas(commands, List.of(claim));
        }
        return result;
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        Map<String, String> ownerByKey = ownersOfDistinctKeys(keys);
        RedisClaimBatch batch = new RedisClaimBatch(this, ownerByKey, lease, calls.deadline());
        Map<String, ClaimResult> byKey = batch.run();
        return inInputOrder(keys, byKey);
    }

    /** The connection a claim goes on: the key's master itself when WAIT must follow the write. */
    RedisClusterAsyncCommands<String, byte[]> claimConnection(String key) {
        return replicas > 0 ? topology.writerOf(redisKey(key)) : topology.routed();
    }

    /** Sends a claim without waiting for it (a batch sends all before reading any reply). */
    RedisFuture<List<Object>> sendClaim(RedisClusterAsyncCommands<String, byte[]> commands, String key, String owner,
            Duration lease) {
        return calls.send(commands, RedisScripts.CLAIM, ScriptOutputType.MULTI, redisKey(key),
                claimArguments(owner, lease, null), false);
    }

    /**
     * Sends the claims of several keys as one script without waiting for it; on a Cluster they must share a slot.
     * The reply holds one {@link #claimResult} reply per key, in order.
     */
    RedisFuture<List<Object>> sendClaimAll(RedisClusterAsyncCommands<String, byte[]> commands, List<String> keys,
            List<String> owners, Duration lease, boolean withSource) {
        return calls.send(commands, RedisScripts.CLAIM_ALL, ScriptOutputType.MULTI, redisKeys(keys),
                claimAllArguments(owners, lease), withSource);
    }

    String[] redisKeys(List<String> keys) {
        return keys.stream().map(this::redisKey).toArray(String[]::new);
    }

    /** {@link RedisScripts#CLAIM_ALL}'s arguments: the lease, then each key's owner. */
    static byte[][] claimAllArguments(List<String> owners, Duration lease) {
        byte[][] arguments = new byte[owners.size() + 1][];
        arguments[0] = millis(lease);
        for (int i = 0; i < owners.size(); i++) {
            arguments[i + 1] = ascii(owners.get(i));
        }
        return arguments;
    }

    /** Whether keys must be grouped by slot before they share a script: on a Cluster, each slot may live elsewhere. */
    boolean cluster() {
        return topology.cluster();
    }

    /**
     * Claims one key, resending after a lost reply; {@code resend} when an earlier attempt may have run. A batch
     * passes a null {@code fingerprint}.
     */
    ClaimResult claimOn(RedisClusterAsyncCommands<String, byte[]> commands, String key, String owner, Duration lease,
            byte[] fingerprint, long deadline, boolean resend) {
        List<Object> reply = calls.run(commands, RedisScripts.CLAIM, ScriptOutputType.MULTI, redisKey(key),
                again -> claimArguments(owner, lease, fingerprint), "claim", deadline, resend);
        return claimResult(key, owner, reply);
    }

    /** Reads a claim script's reply: {won, server expiry[, existing record]}. */
    ClaimResult claimResult(String key, String owner, List<Object> reply) {
        boolean won = (Long) reply.get(0) == 1L;
        long expiry = (Long) reply.get(1);
        if (won) {
            return new Claim(namespace(), key, owner, Instant.ofEpochMilli(expiry));
        }
        RedisRecord existing = RedisRecord.decode((byte[]) reply.get(2));
        // A key someone persisted has no TTL (-1): report the expiry its record carries.
        Instant expiresAt = expiry >= 0 ? Instant.ofEpochMilli(expiry) : existing.expiresAt();
        return new Duplicate(key, existing.state(), expiresAt, existing.result(), existing.fingerprint());
    }

    static byte[][] claimArguments(String owner, Duration lease, byte[] fingerprint) {
        return fingerprint == null ? new byte[][] {ascii(owner), millis(lease)}
                : new byte[][] {ascii(owner), millis(lease), fingerprint};
    }

    /**
     * Fails the claims, and frees their keys, unless enough replicas acknowledged them in time. One WAIT per
     * connection covers every earlier write on it, so a batch waits once per node.
     */
    void awaitReplicas(RedisClusterAsyncCommands<String, byte[]> commands, List<Claim> claims) {
        Long acknowledged;
        try {
            acknowledged = calls.await(commands.waitForReplication(replicas, replicaTimeout.toMillis()),
                    System.nanoTime() + replicaTimeout.plus(calls.timeout()).toNanos());
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            releaseQuietly(claims);
            throw RedisErrors.translate("claim (WAIT)", e instanceof ExecutionException ? e.getCause() : e);
        }
        if (tooFewReplicas(acknowledged)) {
            releaseQuietly(claims);
            throw replicaShortfall(acknowledged);
        }
    }

    /** Whether a WAIT's answer leaves the claim short of the replicas it needs. */
    boolean tooFewReplicas(Long acknowledged) {
        return acknowledged == null || acknowledged < replicas;
    }

    /** The failure of a claim too few replicas acknowledged; the caller has released it. */
    DedupStoreException replicaShortfall(Long acknowledged) {
        return new DedupStoreException("Redis dedup store claim reached " + acknowledged + " of " + replicas
                + " replicas within " + replicaTimeout + "; the claim was released", null, true);
    }

    int replicas() {
        return replicas;
    }

    Duration replicaTimeout() {
        return replicaTimeout;
    }

    RedisTopology topology() {
        return topology;
    }

    /** Releases claims this store just won, best effort; returns the keys it could not release. */
    List<String> releaseQuietly(List<Claim> claims) {
        List<String> stillHeld = new ArrayList<>();
        for (Claim claim : claims) {
            try {
                doRelease(claim);
            } catch (RuntimeException e) {
                stillHeld.add(claim.key());
            }
        }
        return stillHeld;
    }

    /** Groups claims by the connection they went on, to WAIT once per connection. */
    static Map<RedisClusterAsyncCommands<String, byte[]>, List<Claim>> byConnection(
            Map<Claim, RedisClusterAsyncCommands<String, byte[]>> connectionOf) {
        Map<RedisClusterAsyncCommands<String, byte[]>, List<Claim>> groups = new IdentityHashMap<>();
        connectionOf.forEach((claim, commands) -> groups.computeIfAbsent(commands, c -> new ArrayList<>()).add(claim));
        return groups;
    }

    boolean waitsForReplicas() {
        return replicas > 0;
    }

    RedisCalls calls() {
        return calls;
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        return replace(claim, outcome, retention, payload, finishName(outcome));
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        return replace(claim, RecordState.IN_PROGRESS, lease, null, "extend");
    }

    @Override
    protected boolean doRelease(Claim claim) {
        return done(calls.run(topology.routed(), RedisScripts.RELEASE, ScriptOutputType.INTEGER,
                redisKey(claim.key()), releaseArguments(claim), "release", calls.deadline(), false));
    }

    @Override
    protected List<Boolean> doSettleAll(List<Settlement> settlements) {
        return new RedisSettleBatch(this, settlements).run();
    }

    static RedisCalls.Arguments releaseArguments(Claim claim) {
        byte[] owner = ascii(claim.owner());
        return resend -> new byte[][] {owner, resend ? RESEND : FIRST};
    }

    /** An owner-checked script's answer: 1 when it changed the record. */
    static boolean done(Long reply) {
        return reply != null && reply == 1L;
    }

    @Override
    protected KeyRecord doInspect(String key) {
        return inspectResult(key, calls.run(topology.routed(), RedisScripts.INSPECT, ScriptOutputType.MULTI,
                redisKey(key), NO_ARGUMENTS, "inspect", calls.deadline(), false));
    }

    /** Reads an inspect script's reply: {found, server expiry, record}. */
    static KeyRecord inspectResult(String key, List<Object> reply) {
        if ((Long) reply.get(0) == 0L) {
            return null;
        }
        long expiry = (Long) reply.get(1);
        RedisRecord stored = RedisRecord.decode((byte[]) reply.get(2));
        // A key someone persisted has no TTL (-1): report the expiry its record carries, as a duplicate does.
        Instant expiresAt = expiry >= 0 ? Instant.ofEpochMilli(expiry) : stored.expiresAt();
        return new KeyRecord(key, stored.state(), expiresAt, stored.owner(), stored.fingerprint(), stored.result());
    }

    @Override
    protected boolean doForget(String key) {
        // A resend after a lost reply finds the key gone and answers false for a delete the first attempt made.
        return done(calls.run(topology.routed(), RedisScripts.FORGET, ScriptOutputType.INTEGER, redisKey(key),
                NO_ARGUMENTS, "forget", calls.deadline(), false));
    }

    private boolean replace(Claim claim, RecordState state, Duration ttl, byte[] payload, String operation) {
        return done(calls.run(topology.routed(), RedisScripts.REPLACE, ScriptOutputType.INTEGER,
                redisKey(claim.key()), replaceArguments(claim, state, ttl, payload), operation, calls.deadline(),
                false));
    }

    /** The replace script's arguments: complete, fail and extend are one owner-checked rewrite of the record. */
    static RedisCalls.Arguments replaceArguments(Claim claim, RecordState state, Duration ttl, byte[] payload) {
        byte[] owner = ascii(claim.owner());
        byte[] code = RedisRecord.code(state);
        byte[] millis = millis(ttl);
        return resend -> payload == null
                ? new byte[][] {owner, code, millis, resend ? RESEND : FIRST}
                : new byte[][] {owner, code, millis, resend ? RESEND : FIRST, payload};
    }

    /** The operation name a finish reports in its errors. */
    static String finishName(RecordState outcome) {
        return outcome == RecordState.FAILED ? "fail" : "complete";
    }

    @Override
    protected AsyncBackend asyncBackend() {
        return new RedisAsyncBackend(this);
    }

    @Override
    protected void doClose() {
        calls.pending().failAll(); // before the client's timer stops: it would never end them
        onClose.run();
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] millis(Duration duration) {
        return ascii(Long.toString(duration.toMillis()));
    }

    /** Settings for a {@link RedisDedupStore}; each setter checks its value at once, {@link #build()} the server. */
    public static final class Builder {
        private final RedisTopology topology;
        private String namespace = DedupLimits.DEFAULT_NAMESPACE;
        private String keyPrefix = "dedup";
        private boolean hashTagNamespace;
        private Duration timeout = Duration.ofSeconds(2);
        private int replicas;
        private Duration replicaTimeout = Duration.ofMillis(100);
        private boolean allowEvictingMemoryPolicy;
        private Runnable onClose = () -> {};

        private Builder(RedisTopology topology) {
            this.topology = topology;
        }

        /**
         * The namespace every key lives in (default {@code default}): part of each Redis key.
         *
         * @param namespace 1 to 64 characters of {@code A-Z a-z 0-9 . _ -}
         * @return this builder
         * @throws IllegalArgumentException if {@code namespace} does not match
         */
        public Builder namespace(String namespace) {
            this.namespace = DedupLimits.checkNamespace(namespace);
            return this;
        }

        /**
         * The first part of every key (default {@code dedup}), to keep the store's keys apart from others in the
         * same database.
         *
         * @param keyPrefix 1 to 64 of {@code A-Z a-z 0-9 . _ -}; no {@code :}, which separates it from the namespace
         * @return this builder
         * @throws IllegalArgumentException if {@code keyPrefix} does not match
         */
        public Builder keyPrefix(String keyPrefix) {
            if (keyPrefix == null || !PREFIX.matcher(keyPrefix).matches()) {
                throw new IllegalArgumentException("keyPrefix must be 1 to 64 of A-Z a-z 0-9 . _ - (no ':', which"
                        + " separates the prefix from the namespace), but was "
                        + (keyPrefix == null ? "null" : "'" + keyPrefix + "'"));
            }
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * Puts the namespace in a hash tag ({@code dedup:{orders}:key}), so on a Cluster all of a namespace's keys
         * share one slot: multi-key operations work, at the price of one node holding the whole namespace.
         *
         * @param hashTagNamespace true for the hash tag (default false: keys spread over the slots)
         * @return this builder
         */
        public Builder hashTagNamespace(boolean hashTagNamespace) {
            this.hashTagNamespace = hashTagNamespace;
            return this;
        }

        /**
         * How long one call may take, resends after a lost reply included, before it fails with a retryable
         * DedupStoreException (default 2 s).
         *
         * @param timeout 10 ms to 5 min
         * @return this builder
         * @throws IllegalArgumentException if {@code timeout} is out of range
         */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.compareTo(Duration.ofMillis(10)) < 0 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("timeout must be in [PT0.01S, PT5M], but was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * After each won claim, waits (Redis {@code WAIT}, on the connection that made the write) until
         * {@code replicas} replicas have it, at most {@code timeout}; fewer fails the claim (and frees the key). This
         * narrows, but cannot close, the window in which a failover loses a claim: replication stays asynchronous.
         * Default 0: no waiting.
         *
         * @param replicas how many replicas must acknowledge each won claim, 0 to 16
         * @param timeout the longest wait for them, positive; it adds to a claim's latency only when replicas lag
         * @return this builder
         * @throws IllegalArgumentException if {@code replicas} or {@code timeout} is out of range
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

        /**
         * Opens even on a server whose {@code maxmemory-policy} may evict keys (anything but {@code noeviction}),
         * logging a warning: an evicted claim lets its message run twice. Default false: {@link #build()} fails.
         *
         * @param allow true to accept an evicting policy, for example on a cache server sized never to evict
         * @return this builder
         */
        public Builder allowEvictingMemoryPolicy(boolean allow) {
            this.allowEvictingMemoryPolicy = allow;
            return this;
        }

        /** Runs when the store closes: the provider closes the client it created. */
        Builder onClose(Runnable onClose) {
            this.onClose = onClose;
            return this;
        }

        /**
         * Checks every master (version, memory policy, Cluster mode; one {@code INFO} each) and builds the store.
         *
         * @return the store; closing it leaves the connection open
         * @throws dev.dedup.DedupConfigurationException when a server cannot serve the store safely
         * @throws DedupStoreException when a server cannot be reached (retryable)
         */
        public RedisDedupStore build() {
            new RedisServerProbe(topology, timeout).check(allowEvictingMemoryPolicy);
            return new RedisDedupStore(this);
        }
    }
}
