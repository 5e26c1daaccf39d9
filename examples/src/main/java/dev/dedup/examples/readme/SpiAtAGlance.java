package dev.dedup.examples.readme;

import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.KeyRecord;
import dev.dedup.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** The README's summary of {@link dev.dedup.DedupStore}, kept compiling beside the real interface. */
interface SpiAtAGlance {
    // readme:spi
    ClaimResult claim(String key, Duration lease, byte[] fingerprint); // Claim(owner, expiresAt) | Duplicate(state, expiresAt, result, fingerprint)
    ClaimResult claim(String key, Duration lease);                    // = claim(key, lease, null): no fingerprint
    boolean complete(Claim claim, Duration retention, byte[] result); // in progress -> COMPLETED, kept for retention
    boolean fail(Claim claim, Duration retention, byte[] error);      // in progress -> FAILED (terminal), kept for retention
    boolean release(Claim claim);                                     // delete my claim: redelivery runs at once
    boolean extend(Claim claim, Duration lease);                      // heartbeat
    List<ClaimResult> claimAll(List<String> keys, Duration lease);    // one result per key, input order
    List<Boolean> settleAll(List<Settlement> settlements);            // complete/fail/release many, one answer each
    Optional<KeyRecord> inspect(String key);                          // operators: the live record, read-only
    boolean forget(String key);                                       // operators: delete it, whatever state and owner
    AsyncDedupStore async();                                          // the same calls, returning CompletionStage
    void close();
    // end
}
