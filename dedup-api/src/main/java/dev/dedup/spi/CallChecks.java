package dev.dedup.spi;

import dev.dedup.Claim;
import dev.dedup.DedupLimits;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;

/**
 * The argument checks of every store call, in one place: the blocking calls of {@link AbstractDedupStore} and
 * every {@link dev.dedup.AsyncDedupStore} view run these, so both reject the same input the same way, before
 * anything is sent. Each returns what the backend receives (copies of caller-owned arrays and lists).
 */
final class CallChecks {
    private CallChecks() {}

    /** Checks a claim's arguments; returns a copy of the fingerprint, or null. */
    static byte[] claim(String key, Duration lease, byte[] fingerprint) {
        DedupLimits.checkKey(key);
        DedupLimits.checkDuration("lease", lease);
        DedupLimits.checkFingerprint(fingerprint);
        return fingerprint == null ? null : fingerprint.clone();
    }

    /** Checks a complete's or fail's arguments; returns a copy of the payload, or null. */
    static byte[] finish(String namespace, Claim claim, Duration retention, byte[] payload) {
        claimOf(namespace, claim);
        DedupLimits.checkDuration("retention", retention);
        DedupLimits.checkResult(payload);
        return payload == null ? null : payload.clone();
    }

    static void extend(String namespace, Claim claim, Duration lease) {
        claimOf(namespace, claim);
        DedupLimits.checkDuration("lease", lease);
    }

    /** Checks a batch; returns an immutable copy of it. */
    static List<String> claimAll(List<String> keys, Duration lease) {
        DedupLimits.checkKeys(keys);
        DedupLimits.checkDuration("lease", lease);
        return List.copyOf(keys);
    }

    static void claimOf(String namespace, Claim claim) {
        DedupLimits.checkClaim(namespace, claim);
    }

    /** Checks a batch of settlements; returns an immutable copy of it. */
    static List<Settlement> settleAll(String namespace, List<Settlement> settlements) {
        return List.copyOf(DedupLimits.checkSettlements(namespace, settlements));
    }
}
