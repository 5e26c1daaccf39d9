package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The contract under network faults, for every store that talks to a server: a {@link FaultProxy} sits between the
 * store's client and the real server and loses replies, delays them, cuts and refuses connections. Whatever the
 * fault, there is never a second winner for a key, a key is never blocked for longer than one lease, a call fails
 * only with a {@link DedupStoreException} (and in bounded time), and the store serves again once the network heals.
 *
 * <pre>{@code
 * class RedisNetworkFaultContractTest extends NetworkFaultContractTest {
 *     protected InetSocketAddress server() { return new InetSocketAddress("127.0.0.1", 16379); }
 *     protected DedupStore openStoreVia(String host, int port, String namespace) { ... timeout 1 s ... }
 * }
 * }</pre>
 */
public abstract class NetworkFaultContractTest {
    /** Long enough that no lease lapses while a fault plays out, short enough to wait out once. */
    protected static final Duration LEASE = Duration.ofSeconds(6);

    private final List<DedupStore> opened = new ArrayList<>();
    private FaultProxy proxy;
    /** The store under test, whose every call crosses the proxy. */
    protected DedupStore faulty;
    /** A second store on the same namespace, straight to the server: the other consumer, and the witness. */
    protected DedupStore direct;

    /** {@return the real server the proxy forwards to, and the {@link #direct} store's address} */
    protected abstract InetSocketAddress server();

    /**
     * Opens the store under test with its client pointed at {@code host:port} (the proxy) instead of the server. Use
     * an operation timeout of about one second, so that faults play out quickly; {@link #operationTimeout()} says
     * what it is.
     *
     * @param host the host to connect to: the proxy's loopback address, or the real server's
     * @param port the port to connect to
     * @param namespace a fresh random namespace, the same for the faulty and the direct store
     * @return a new open store; the test closes it
     */
    protected abstract DedupStore openStoreVia(String host, int port, String namespace);

    /**
     * {@return the operation timeout {@link #openStoreVia} configures: a call under a fault must end within twice
     * that; 1 s unless overridden}
     */
    protected Duration operationTimeout() {
        return Duration.ofSeconds(1);
    }

    /** {@return how long after the network heals the store must serve again; 5 s unless overridden} */
    protected Duration recoveryLimit() {
        return Duration.ofSeconds(5);
    }

    @BeforeEach
    final void startTheProxy() {
        String namespace = "net-" + UUID.randomUUID().toString().substring(0, 8);
        proxy = FaultProxy.start(server().getHostString(), server().getPort());
        faulty = track(openStoreVia(proxy.host(), proxy.port(), namespace));
        direct = track(openStoreVia(server().getHostString(), server().getPort(), namespace));
    }

    @AfterEach
    final void stopTheProxy() {
        proxy.heal();
        for (DedupStore store : opened) {
            store.close();
        }
        proxy.close();
    }

    private DedupStore track(DedupStore store) {
        opened.add(store);
        return store;
    }

    private static String newKey() {
        return "net-" + UUID.randomUUID();
    }

    @Test
    @DisplayName("lost reply to a claim: the caller gets its own claim (or an error), never a duplicate of itself")
    void lostClaimReplyIsTheCallersOwnClaim() throws Exception {
        String key = newKey();
        proxy.loseNextReply();

        Attempt<ClaimResult> attempt = attempt(() -> faulty.claim(key, LEASE));

        assertThat(proxy.lostReplies()).as("a reply was really lost").isEqualTo(1);
        if (attempt.value() != null) {
            // Nobody else touched the key: a duplicate here would be the caller's own claim, lost to it.
            assertThat(attempt.value()).as("claim after a lost reply").isInstanceOf(Claim.class);
            Claim claim = (Claim) attempt.value();
            assertThat(direct.claim(key, LEASE)).as("a second consumer").isInstanceOf(Duplicate.class);
            assertThat(faulty.complete(claim, LEASE, new byte[] {1})).as("the winner completes").isTrue();
            assertThat(((Duplicate) direct.claim(key, LEASE)).state()).isEqualTo(RecordState.COMPLETED);
        } else {
            assertFreedWithinOneLease(key, attempt.startedAt());
        }
    }

    @Test
    @DisplayName("lost reply to a complete: the record ends completed, and the caller is not told it lost the key")
    void lostCompleteReplyStillCompletes() throws Exception {
        String key = newKey();
        Claim claim = claimed(faulty.claim(key, LEASE));
        proxy.loseNextReply();

        Attempt<Boolean> attempt = attempt(() -> faulty.complete(claim, LEASE, new byte[] {2}));

        assertThat(proxy.lostReplies()).as("a reply was really lost").isEqualTo(1);
        ClaimResult after = direct.claim(key, LEASE);
        assertThat(after).as("no second winner after a lost complete reply").isInstanceOf(Duplicate.class);
        if (attempt.value() != null) {
            assertThat(attempt.value()).as("complete after a lost reply, by the record's own owner").isTrue();
            assertThat(((Duplicate) after).state()).isEqualTo(RecordState.COMPLETED);
        }
    }

    @Test
    @DisplayName("lost reply to a release: the key is free at once or after the lease, never held by nobody longer")
    void lostReleaseReplyFreesTheKey() throws Exception {
        String key = newKey();
        Claim claim = claimed(faulty.claim(key, LEASE));
        proxy.loseNextReply();

        Attempt<Boolean> attempt = attempt(() -> faulty.release(claim));

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertFreedWithinOneLease(key, claim.expiresAt().minus(LEASE));
        if (attempt.value() != null) {
            assertThat(attempt.value()).as("release after a lost reply").isTrue();
        }
    }

    @Test
    @DisplayName("slow replies past the timeout fail the call in bounded time; the key is never won twice")
    void slowRepliesFailInBoundedTime() throws Exception {
        String key = newKey();
        proxy.delayReplies(operationTimeout().multipliedBy(3));

        Attempt<ClaimResult> attempt = attempt(() -> faulty.claim(key, LEASE));

        proxy.heal();
        assertThat(attempt.value()).as("a claim whose replies all came too late").isNull();
        ClaimResult other = direct.claim(key, LEASE);
        if (other instanceof Claim) {
            // The slow claim may still have reached the server; if so, the second consumer must not have won.
            assertThat(faulty.claim(key, LEASE)).isInstanceOf(Duplicate.class);
        } else {
            assertFreedWithinOneLease(key, attempt.startedAt());
        }
    }

    @Test
    @DisplayName("cut connections: the next calls reconnect and serve, or fail as retryable and then serve")
    void cutConnectionsRecover() throws Exception {
        Claim before = claimed(faulty.claim(newKey(), LEASE));
        proxy.cutConnections();

        Duration recovery = ServerOutages.awaitRecovery(() -> faulty.claim(newKey(), LEASE), recoveryLimit());

        assertThat(recovery).isLessThan(recoveryLimit());
        assertThat(faulty.complete(before, LEASE, null)).as("a claim made before the cut completes").isTrue();
    }

    @Test
    @DisplayName("refused connections fail calls as retryable in bounded time; service returns once accepted again")
    void refusedConnectionsFailFastAndRecover() throws Exception {
        faulty.claim(newKey(), LEASE);
        proxy.refuseConnections(true);
        proxy.cutConnections();

        Attempt<ClaimResult> attempt = attempt(() -> faulty.claim(newKey(), LEASE));
        assertThat(attempt.value()).as("a claim while the server refuses connections").isNull();

        proxy.heal();
        Duration recovery = ServerOutages.awaitRecovery(() -> faulty.claim(newKey(), LEASE), recoveryLimit());
        assertThat(recovery).isLessThan(recoveryLimit());
    }

    @Test
    @DisplayName("a server that accepts and never answers fails calls as retryable within twice the timeout")
    void blackHoleFailsInBoundedTime() throws Exception {
        proxy.cutConnections();
        proxy.blackHole(true);

        Attempt<ClaimResult> attempt = attempt(() -> faulty.claim(newKey(), LEASE));

        assertThat(attempt.value()).as("a claim sent into a black hole").isNull();
        proxy.heal();
        proxy.cutConnections();
        ServerOutages.awaitRecovery(() -> faulty.claim(newKey(), LEASE), recoveryLimit());
    }

    /** After a failed or unknown call, the key must be claimable by another consumer within one lease. */
    private void assertFreedWithinOneLease(String key, Instant heldSince) throws InterruptedException {
        Instant deadline = heldSince.plus(LEASE).plus(operationTimeout().multipliedBy(2));
        while (true) {
            ClaimResult result = direct.claim(key, LEASE);
            if (result instanceof Claim) {
                return;
            }
            assertThat(((Duplicate) result).state()).as("a key nobody completed").isEqualTo(RecordState.IN_PROGRESS);
            assertThat(Instant.now()).as("the key is free within one lease").isBefore(deadline);
            Thread.sleep(100);
        }
    }

    private static Claim claimed(ClaimResult result) {
        assertThat(result).isInstanceOf(Claim.class);
        return (Claim) result;
    }

    /** The value of a call, or null when it failed; a failure must be a DedupStoreException and in bounded time. */
    private record Attempt<T>(T value, Instant startedAt) {}

    private <T> Attempt<T> attempt(Callable<T> call) throws Exception {
        Instant started = Instant.now();
        long start = System.nanoTime();
        try {
            return new Attempt<>(call.call(), started);
        } catch (DedupStoreException e) {
            assertThat(e.isRetryable()).as("a network fault is retryable: " + e.getMessage()).isTrue();
            return new Attempt<>(null, started);
        } finally {
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(took).as("a call under a network fault ends in bounded time")
                    .isLessThan(operationTimeout().multipliedBy(2).plusSeconds(1));
        }
    }
}
