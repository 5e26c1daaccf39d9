package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import java.time.Duration;

/** What the store-source tests check of the store a client bean gave: it claims once, on its server. */
final class StoreClaims {
    private StoreClaims() {}

    static void claimsOnce(DedupStore store) {
        ClaimResult first = store.claim("k", Duration.ofSeconds(5));
        assertThat(first).isInstanceOf(Claim.class);
        assertThat(store.claim("k", Duration.ofSeconds(5)).isClaimed()).isFalse();
        assertThat(store.release((Claim) first)).isTrue();
    }
}
