package dev.dedup.tck;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.Duplicate;
import dev.dedup.KeyRecord;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import dev.dedup.spi.AbstractDedupStore;
import dev.dedup.spi.AsyncBackend;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A map-backed store that keeps the contract, except for the one {@link Mutation} it is built with: the kit must
 * fail on every mutation and pass on {@link Mutation#NONE}. The map is passed in, so stores opened for different
 * namespaces share it the way they share a real server.
 */
final class MutantDedupStore extends AbstractDedupStore {

    /** One way to break the contract each; the description says what a real store would get wrong. */
    enum Mutation {
        NONE("nothing broken: the control"),
        GET_THEN_PUT_CLAIM("claim checks the key, yields, then writes: two racers can both win"),
        COMPLETE_WITHOUT_OWNER_CHECK("complete ignores the owner token"),
        FAIL_WITHOUT_OWNER_CHECK("fail ignores the owner token"),
        RELEASE_WITHOUT_OWNER_CHECK("release ignores the owner token"),
        EXTEND_WITHOUT_OWNER_CHECK("extend ignores the owner token"),
        COMPLETE_AFTER_LAPSE("complete checks the owner but not the expiry: a lapsed owner completes"),
        FINISHED_RECORD_REOPENS("complete, fail, release and extend skip the in-progress check"),
        CLAIM_IGNORES_EXPIRY("any record, live or expired, makes a claim a duplicate"),
        LEASE_IN_SECONDS("the claim's lease millis are applied as seconds"),
        EXTEND_IN_SECONDS("extend's lease millis are applied as seconds"),
        EXTEND_NEVER_SHORTENS("extend keeps the later of the old and the new expiry"),
        NAMESPACE_IGNORED("every namespace shares one key space"),
        CLAIM_ALL_IGNORES_NAMESPACE("claimAll writes every namespace into one key space; claim does not"),
        COMPLETE_KEEPS_LEASE("complete keeps the lease's expiry instead of the retention"),
        RETENTION_IN_SECONDS("complete's and fail's retention millis are applied as seconds"),
        FAILED_STORED_AS_COMPLETED("fail stores a COMPLETED record"),
        CLAIM_ALL_LOSES_ORDER("claimAll returns its results in reverse order"),
        CLAIM_ALL_CLAIMS_REPEATS("claimAll returns the same Claim for every repeat of a key in the batch"),
        FINGERPRINT_DROPPED("claim does not store the fingerprint: duplicates report none"),
        FINISH_DROPS_FINGERPRINT("complete and fail write a record without the claim's fingerprint"),
        TAKEOVER_KEEPS_FINGERPRINT("a take-over of an expired record keeps the old record's fingerprint"),
        INSPECT_SHOWS_EXPIRED("inspect reports a record whose expiry has passed, as if the backend's late deletion"
                + " decided"),
        FORGET_KEEPS_RECORD("forget reports the live record removed but does not delete it"),
        FORGET_IGNORES_NAMESPACE("forget deletes the key in every namespace"),
        SETTLE_WITHOUT_OWNER_CHECK("settleAll ignores the owner token: it settles another owner's claim"),
        SETTLE_LOSES_ORDER("settleAll returns its answers in reverse order"),
        SETTLE_SHIFTS_PAYLOADS("settleAll stores each claim's result under the next claim's key"),
        ASYNC_FINISH_BEFORE_WRITE("the async view reports complete and fail done at once and writes the record"
                + " later (the kit runs through store.async())"),
        ASYNC_CANCEL_DROPPED("an async view hands back its own copy of the claim stage, so a caller's cancel does not"
                + " reach the claim, which is won and held (the kit runs through that view)");

        final String description;

        Mutation(String description) {
            this.description = description;
        }
    }

    /** Where a record lives: the namespace is part of the address unless a mutation drops it. */
    record Slot(String namespace, String key) {}

    record Entry(String owner, RecordState state, Instant expiresAt, byte[] payload, byte[] fingerprint) {
        boolean liveAt(Instant now) {
            return expiresAt.isAfter(now);
        }
    }

    private final Mutation mutation;
    private final ConcurrentMap<Slot, Entry> records;
    private final Clock clock = Clock.systemUTC();

    MutantDedupStore(String namespace, Mutation mutation, ConcurrentMap<Slot, Entry> records) {
        super(namespace);
        this.mutation = Objects.requireNonNull(mutation, "mutation");
        this.records = Objects.requireNonNull(records, "records");
    }

    @Override
    protected AsyncBackend asyncBackend() {
        AsyncBackend direct = AsyncBackend.blockingOn(this, Runnable::run);
        return mutation == Mutation.ASYNC_FINISH_BEFORE_WRITE ? new EarlyFinish(direct) : direct;
    }

    /** Answers complete and fail with true at once and writes the record a moment later, as a broken driver might. */
    private record EarlyFinish(AsyncBackend direct) implements AsyncBackend {
        private static final Executor LATER = CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS, Runnable::run);

        @Override
        public CompletionStage<ClaimResult> claim(String key, Duration lease, byte[] fingerprint) {
            return direct.claim(key, lease, fingerprint);
        }

        @Override
        public CompletionStage<Boolean> finish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
            LATER.execute(() -> direct.finish(claim, outcome, retention, payload));
            return CompletableFuture.completedFuture(true);
        }

        @Override
        public CompletionStage<Boolean> release(Claim claim) {
            return direct.release(claim);
        }

        @Override
        public CompletionStage<Boolean> extend(Claim claim, Duration lease) {
            return direct.extend(claim, lease);
        }

        @Override
        public CompletionStage<List<ClaimResult>> claimAll(List<String> keys, Duration lease) {
            return direct.claimAll(keys, lease);
        }

        @Override
        public CompletionStage<KeyRecord> inspect(String key) {
            return direct.inspect(key);
        }

        @Override
        public CompletionStage<Boolean> forget(String key) {
            return direct.forget(key);
        }
    }

    @Override
    protected ClaimResult doClaim(String key, String owner, Duration lease, byte[] fingerprint) {
        return claimIn(slot(key, mutation == Mutation.NAMESPACE_IGNORED), key, owner, lease,
                mutation == Mutation.FINGERPRINT_DROPPED ? null : fingerprint);
    }

    @Override
    protected List<ClaimResult> doClaimAll(List<String> keys, Duration lease) {
        boolean shared = mutation == Mutation.NAMESPACE_IGNORED || mutation == Mutation.CLAIM_ALL_IGNORES_NAMESPACE;
        Map<String, ClaimResult> byKey = new LinkedHashMap<>();
        ownersOfDistinctKeys(keys).forEach((key, owner) -> byKey.put(key, claimIn(slot(key, shared), key, owner, lease, null)));
        List<ClaimResult> results;
        if (mutation == Mutation.CLAIM_ALL_CLAIMS_REPEATS) {
            results = new ArrayList<>();
            for (String key : keys) {
                results.add(byKey.get(key));
            }
        } else {
            results = inInputOrder(keys, byKey);
        }
        if (mutation == Mutation.CLAIM_ALL_LOSES_ORDER) {
            Collections.reverse(results);
        }
        return results;
    }

    private ClaimResult claimIn(Slot slot, String key, String owner, Duration lease, byte[] fingerprint) {
        Instant now = clock.instant();
        Entry fresh = new Entry(owner, RecordState.IN_PROGRESS, now.plus(leaseOf(lease, Mutation.LEASE_IN_SECONDS)), null,
                fingerprint);
        Entry current;
        if (mutation == Mutation.GET_THEN_PUT_CLAIM) {
            Entry existing = records.get(slot);
            // The gap a non-atomic check-then-set leaves; the yield lets racers interleave inside it.
            Thread.yield();
            if (existing == null || !existing.liveAt(now)) {
                records.put(slot, fresh);
                current = fresh;
            } else {
                current = existing;
            }
        } else {
            current = records.compute(slot, (k, existing) -> {
                if (existing == null || (mutation != Mutation.CLAIM_IGNORES_EXPIRY && !existing.liveAt(now))) {
                    return existing != null && mutation == Mutation.TAKEOVER_KEEPS_FINGERPRINT
                            ? new Entry(owner, fresh.state(), fresh.expiresAt(), null, existing.fingerprint()) : fresh;
                }
                return existing;
            });
        }
        if (current != fresh && current.owner().equals(owner)) {
            return new Claim(namespace(), key, owner, current.expiresAt());   // the take-over that kept a fingerprint
        }
        if (current == fresh) {
            return new Claim(namespace(), key, owner, fresh.expiresAt());
        }
        return new Duplicate(key, current.state(), current.expiresAt(), current.payload(), current.fingerprint());
    }

    @Override
    protected boolean doFinish(Claim claim, RecordState outcome, Duration retention, byte[] payload) {
        Instant now = clock.instant();
        boolean completing = outcome == RecordState.COMPLETED;
        RecordState stored = mutation == Mutation.FAILED_STORED_AS_COMPLETED ? RecordState.COMPLETED : outcome;
        Instant retained = now.plus(leaseOf(retention, Mutation.RETENTION_IN_SECONDS));
        return replaceIfHeld(claim, now,
                completing ? mutation == Mutation.COMPLETE_WITHOUT_OWNER_CHECK : mutation == Mutation.FAIL_WITHOUT_OWNER_CHECK,
                completing && mutation == Mutation.COMPLETE_AFTER_LAPSE,
                existing -> new Entry(claim.owner(), stored,
                        completing && mutation == Mutation.COMPLETE_KEEPS_LEASE ? existing.expiresAt() : retained,
                        payload, mutation == Mutation.FINISH_DROPS_FINGERPRINT ? null : existing.fingerprint()));
    }

    @Override
    protected boolean doRelease(Claim claim) {
        return replaceIfHeld(claim, clock.instant(), mutation == Mutation.RELEASE_WITHOUT_OWNER_CHECK, false,
                existing -> null);
    }

    @Override
    protected boolean doExtend(Claim claim, Duration lease) {
        Instant now = clock.instant();
        Instant renewed = now.plus(leaseOf(lease, Mutation.EXTEND_IN_SECONDS));
        return replaceIfHeld(claim, now, mutation == Mutation.EXTEND_WITHOUT_OWNER_CHECK, false, existing -> new Entry(
                claim.owner(), RecordState.IN_PROGRESS,
                mutation == Mutation.EXTEND_NEVER_SHORTENS && existing.expiresAt().isAfter(renewed)
                        ? existing.expiresAt() : renewed,
                null, existing.fingerprint()));
    }

    @Override
    protected List<Boolean> doSettleAll(List<Settlement> settlements) {
        List<Boolean> settled = new ArrayList<>();
        for (int i = 0; i < settlements.size(); i++) {
            Settlement settlement = settlements.get(i);
            Claim claim = settlement.claim();
            if (mutation == Mutation.SETTLE_WITHOUT_OWNER_CHECK) {
                claim = new Claim(claim.namespace(), claim.key(), ownerOf(claim), claim.expiresAt());
            }
            byte[] payload = mutation == Mutation.SETTLE_SHIFTS_PAYLOADS
                    ? settlements.get((i + 1) % settlements.size()).payload() : settlement.payload();
            settled.add(settlement.kind() == Settlement.Kind.RELEASE ? doRelease(claim)
                    : doFinish(claim, settlement.endState(), settlement.retention(), payload));
        }
        if (mutation == Mutation.SETTLE_LOSES_ORDER) {
            Collections.reverse(settled);
        }
        return settled;
    }

    /** The owner token stored for the claim's key now, whoever that is: what a store without an owner check uses. */
    private String ownerOf(Claim claim) {
        Entry entry = records.get(slot(claim.key(), mutation == Mutation.NAMESPACE_IGNORED));
        return entry == null ? claim.owner() : entry.owner();
    }

    @Override
    protected KeyRecord doInspect(String key) {
        Entry entry = records.get(slot(key, mutation == Mutation.NAMESPACE_IGNORED));
        if (entry == null || (mutation != Mutation.INSPECT_SHOWS_EXPIRED && !entry.liveAt(clock.instant()))) {
            return null;
        }
        return new KeyRecord(key, entry.state(), entry.expiresAt(), entry.owner(), entry.fingerprint(),
                entry.payload());
    }

    @Override
    protected boolean doForget(String key) {
        Instant now = clock.instant();
        Slot slot = slot(key, mutation == Mutation.NAMESPACE_IGNORED);
        if (mutation == Mutation.FORGET_KEEPS_RECORD) {
            Entry entry = records.get(slot);
            return entry != null && entry.liveAt(now);
        }
        Entry removed = records.remove(slot);
        if (mutation == Mutation.FORGET_IGNORES_NAMESPACE) {
            records.keySet().removeIf(each -> each.key().equals(key));   // the other namespaces' records too
        }
        return removed != null && removed.liveAt(now);
    }

    private interface Replacement {
        Entry of(Entry existing);
    }

    /**
     * Replaces the claim's record (null deletes it) iff it is in progress, carries the claim's owner and is live;
     * the two flags skip the owner check and the expiry check, for the mutations that drop them.
     */
    private boolean replaceIfHeld(Claim claim, Instant now, boolean anyOwner, boolean evenExpired, Replacement next) {
        boolean[] replaced = {false};
        records.computeIfPresent(slot(claim.key(), mutation == Mutation.NAMESPACE_IGNORED), (k, existing) -> {
            replaced[0] = (mutation == Mutation.FINISHED_RECORD_REOPENS || existing.state() == RecordState.IN_PROGRESS)
                    && (anyOwner || existing.owner().equals(claim.owner()))
                    && (evenExpired || existing.liveAt(now));
            return replaced[0] ? next.of(existing) : existing;
        });
        return replaced[0];
    }

    private Duration leaseOf(Duration duration, Mutation inSeconds) {
        return mutation == inSeconds ? Duration.ofSeconds(duration.toMillis()) : duration;
    }

    private Slot slot(String key, boolean sharedAcrossNamespaces) {
        return new Slot(sharedAcrossNamespaces ? "" : namespace(), key);
    }
}
