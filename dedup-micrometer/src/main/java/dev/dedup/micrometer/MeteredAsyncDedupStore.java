package dev.dedup.micrometer;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.KeyRecord;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/** {@link MeteredDedupStore#async()}: the delegate's non-blocking view, each call recorded as the blocking one is. */
final class MeteredAsyncDedupStore implements AsyncDedupStore {
    private final AsyncDedupStore async;
    private final MeteredDedupStore meters;

    MeteredAsyncDedupStore(AsyncDedupStore async, MeteredDedupStore meters) {
        this.async = async;
        this.meters = meters;
    }

    @Override
    public String namespace() {
        return async.namespace();
    }

    @Override
    public CompletionStage<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
        return meters.timedAsync("claim", () -> async.claim(key, lease, fingerprint), meters::counted);
    }

    @Override
    public CompletionStage<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
        return meters.timedAsync("claim_all", () -> async.claimAll(keys, lease), meters::countedAll);
    }

    @Override
    public CompletionStage<Boolean> complete(Claim claim, Duration retention, byte[] result) {
        return meters.timedAsync("complete", () -> async.complete(claim, retention, result),
                MeteredDedupStore::owned);
    }

    @Override
    public CompletionStage<Boolean> fail(Claim claim, Duration retention, byte[] error) {
        return meters.timedAsync("fail", () -> async.fail(claim, retention, error), MeteredDedupStore::owned);
    }

    @Override
    public CompletionStage<Boolean> release(Claim claim) {
        return meters.timedAsync("release", () -> async.release(claim), MeteredDedupStore::owned);
    }

    @Override
    public CompletionStage<Boolean> extend(Claim claim, Duration lease) {
        return meters.timedAsync("extend", () -> async.extend(claim, lease), MeteredDedupStore::owned);
    }

    @Override
    public CompletionStage<List<Boolean>> settleAll(List<Settlement> settlements) {
        return meters.timedAsync("settle_all", () -> async.settleAll(settlements), MeteredDedupStore::allOwned);
    }

    @Override
    public CompletionStage<Optional<KeyRecord>> inspect(String key) {
        return meters.timedAsync("inspect", () -> async.inspect(key), found -> found.isPresent() ? "ok" : "absent");
    }

    @Override
    public CompletionStage<Boolean> forget(String key) {
        return meters.timedAsync("forget", () -> async.forget(key), removed -> removed ? "ok" : "absent");
    }
}
