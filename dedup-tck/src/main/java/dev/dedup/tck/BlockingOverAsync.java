package dev.dedup.tck;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A {@link DedupStore} that makes every call through an {@link AsyncDedupStore} and waits for it, rethrowing the
 * exception the stage failed with (not a {@link CompletionException} around it): with it, the whole kit runs
 * unchanged against a store's non-blocking path.
 *
 * <pre>{@code
 * class RedisAsyncContractTest extends DedupStoreContractTest {
 *     protected DedupStore openStore(String namespace) {
 *         return BlockingOverAsync.of(RedisDedupStore.builder(connection).namespace(namespace).build());
 *     }
 * }
 * }</pre>
 */
public final class BlockingOverAsync implements DedupStore {
    private final AsyncDedupStore async;
    private final DedupStore owner;

    private BlockingOverAsync(AsyncDedupStore async, DedupStore owner) {
        this.async = Objects.requireNonNull(async, "async");
        this.owner = Objects.requireNonNull(owner, "owner");
    }

    /**
     * The kit's view of {@code store}'s own non-blocking path, {@link DedupStore#async()}.
     *
     * @param store the store under test; closing the view closes it
     * @return a blocking store whose every call goes through {@code store.async()}
     */
    public static BlockingOverAsync of(DedupStore store) {
        return new BlockingOverAsync(store.async(), store);
    }

    /**
     * The kit's view of any non-blocking view, such as {@link AsyncDedupStore#onExecutor}'s.
     *
     * @param async the view whose calls are made
     * @param owner the store behind it; closing this view closes it
     * @return a blocking store whose every call goes through {@code async}
     */
    public static BlockingOverAsync of(AsyncDedupStore async, DedupStore owner) {
        return new BlockingOverAsync(async, owner);
    }

    /**
     * The kit's view of a blocking store through {@link AsyncDedupStore#onExecutor}, on a pool of 8 daemon threads
     * that every such view in the test JVM shares (made when first needed): how a store whose client blocks runs the
     * whole kit through the adapter.
     *
     * @param store the blocking store under test; closing the view closes it
     * @return a blocking store whose every call goes through {@code AsyncDedupStore.onExecutor(store, pool)}
     */
    public static BlockingOverAsync onExecutor(DedupStore store) {
        return new BlockingOverAsync(AsyncDedupStore.onExecutor(store, SharedPool.EXECUTOR), store);
    }

    /** The executor views' threads, made on first use: daemons, so they never hold the test JVM open. */
    private static final class SharedPool {
        static final ExecutorService EXECUTOR = Executors.newFixedThreadPool(8, task -> {
            Thread thread = new Thread(task, "dedup-kit-on-executor");
            thread.setDaemon(true);
            return thread;
        });
    }

    @Override
    public String namespace() {
        return async.namespace();
    }

    @Override
    public ClaimResult claim(String key, Duration lease, byte[] fingerprint) {
        return join(async.claim(key, lease, fingerprint));
    }

    @Override
    public boolean complete(Claim claim, Duration retention, byte[] result) {
        return join(async.complete(claim, retention, result));
    }

    @Override
    public boolean fail(Claim claim, Duration retention, byte[] error) {
        return join(async.fail(claim, retention, error));
    }

    @Override
    public boolean release(Claim claim) {
        return join(async.release(claim));
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
        return join(async.extend(claim, lease));
    }

    @Override
    public List<ClaimResult> claimAll(List<String> keys, Duration lease) {
        return join(async.claimAll(keys, lease));
    }

    @Override
    public List<Boolean> settleAll(List<Settlement> settlements) {
        return join(async.settleAll(settlements));
    }

    @Override
    public Optional<KeyRecord> inspect(String key) {
        return join(async.inspect(key));
    }

    @Override
    public boolean forget(String key) {
        return join(async.forget(key));
    }

    @Override
    public AsyncDedupStore async() {
        return async;
    }

    @Override
    public void close() {
        owner.close();
    }

    private static <T> T join(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
