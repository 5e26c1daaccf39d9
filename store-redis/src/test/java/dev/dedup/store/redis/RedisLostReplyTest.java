package dev.dedup.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStores;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.tck.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Stricter than the kit for Redis: a reply lost after the server ran the command must not change the answer. The
 * store resends within its timeout and recognises its own owner's outcome, so each call returns what it would have
 * without the fault.
 */
class RedisLostReplyTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    private FaultProxy proxy;
    private DedupStore faulty;
    private DedupStore direct;

    @BeforeEach
    void open() {
        URI server = URI.create(RedisTestSupport.standaloneUrl());
        proxy = FaultProxy.start(server.getHost(), server.getPort());
        String namespace = "lost-" + UUID.randomUUID().toString().substring(0, 8);
        faulty = open("redis://" + proxy.host() + ":" + proxy.port() + "?namespace=" + namespace
                + "&timeout=2s");
        direct = DedupStores.open(RedisTestSupport.standaloneUrl() + "?namespace=" + namespace);
    }

    /** Opens the store behind the proxy; the async variant wraps it. */
    DedupStore open(String uri) {
        return DedupStores.open(uri);
    }

    @AfterEach
    void close() {
        faulty.close();
        direct.close();
        proxy.close();
    }

    @Test
    @DisplayName("claim: the caller gets its own claim, with the server's expiry, not a duplicate of itself")
    void claim() {
        String key = "k-" + UUID.randomUUID();
        proxy.loseNextReply();

        ClaimResult result = faulty.claim(key, LEASE);

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(result).isInstanceOf(Claim.class);
        Duplicate other = (Duplicate) direct.claim(key, LEASE);
        assertThat(Duration.between(result.expiresAt(), other.expiresAt()).abs()).isLessThan(Duration.ofMillis(5));
        assertThat(faulty.complete((Claim) result, LEASE, null)).isTrue();
    }

    @Test
    @DisplayName("complete, fail, extend and release report success when their first attempt already succeeded")
    void ownerCheckedOperations() {
        Claim completed = (Claim) faulty.claim("c-" + UUID.randomUUID(), LEASE);
        Claim failed = (Claim) faulty.claim("f-" + UUID.randomUUID(), LEASE);
        Claim extended = (Claim) faulty.claim("e-" + UUID.randomUUID(), LEASE);
        Claim released = (Claim) faulty.claim("r-" + UUID.randomUUID(), LEASE);

        proxy.loseNextReply();
        assertThat(faulty.complete(completed, LEASE, new byte[] {1})).as("complete").isTrue();
        proxy.loseNextReply();
        assertThat(faulty.fail(failed, LEASE, new byte[] {2})).as("fail").isTrue();
        proxy.loseNextReply();
        assertThat(faulty.extend(extended, LEASE.multipliedBy(2))).as("extend").isTrue();
        proxy.loseNextReply();
        assertThat(faulty.release(released)).as("release").isTrue();

        assertThat(proxy.lostReplies()).isEqualTo(4);
        assertThat(((Duplicate) direct.claim(completed.key(), LEASE)).state()).isEqualTo(RecordState.COMPLETED);
        assertThat(((Duplicate) direct.claim(failed.key(), LEASE)).state()).isEqualTo(RecordState.FAILED);
        assertThat(direct.claim(extended.key(), LEASE).expiresAt()).isAfter(extended.expiresAt());
        assertThat(direct.claim(released.key(), LEASE)).isInstanceOf(Claim.class);
        // A resend never touches a record that is not the caller's own.
        assertThat(faulty.release(released)).as("a second release, of someone else's claim").isFalse();
    }

    @Test
    @DisplayName("claimAll: a reply lost mid-batch still ends with every key claimed by this batch")
    void claimAll() {
        List<String> keys = List.of("b1-" + UUID.randomUUID(), "b2-" + UUID.randomUUID(), "b3-" + UUID.randomUUID());
        proxy.loseNextReply();

        List<ClaimResult> results = faulty.claimAll(keys, LEASE);

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(results).allSatisfy(result -> assertThat(result).isInstanceOf(Claim.class));
    }
}
