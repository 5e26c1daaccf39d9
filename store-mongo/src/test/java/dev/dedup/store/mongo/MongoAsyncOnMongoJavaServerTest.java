package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import dev.dedup.AsyncDedupStore;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.DedupStores;
import dev.dedup.tck.FaultProxy;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The non-blocking path on mongo-java-server 1.47.0 in-process (always: the tests stop the server): it does not
 * block its caller, a failure of the server fails the stage with a typed {@link DedupStoreException}, and a store
 * without a reactive client keeps today's {@code async()}.
 */
class MongoAsyncOnMongoJavaServerTest {
    private static final String DATABASE = "dedup_async";
    private static final int IN_FLIGHT = 64;
    private static final Duration LEASE = Duration.ofMinutes(1);

    private MongoTestServer server;
    private FaultProxy proxy;
    /** What a test opened, closed last first. */
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    @BeforeEach
    void startServer() {
        server = MongoTestServer.startInProcess();
        proxy = FaultProxy.start(server.address().getHostString(), server.address().getPort());
        try (MongoClient client = MongoFaultClients.client(server.address().getHostString(),
                server.address().getPort(), Duration.ofSeconds(5))) {
            MongoDedupStore.builder(client, DATABASE).validateIndexes(false).build().createIndexes();
        }
    }

    @AfterEach
    void stopServer() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        proxy.close();
        server.close();
    }

    /** A store whose both clients talk through the proxy, every wait bounded by {@code timeout}. */
    private MongoDedupStore proxiedStore(Duration timeout) {
        MongoClient client = MongoFaultClients.client(proxy.host(), proxy.port(), timeout);
        com.mongodb.reactivestreams.client.MongoClient reactive =
                MongoFaultClients.reactiveClient(proxy.host(), proxy.port(), timeout);
        opened.push(client);
        opened.push(reactive);
        MongoDedupStore store = MongoDedupStore.builder(client, DATABASE).reactive(reactive)
                .namespace("async-" + UUID.randomUUID().toString().substring(0, 8)).timeout(timeout).build();
        opened.push(store);
        return store;
    }

    @Test
    @DisplayName("one thread issues 64 claims while no reply can arrive; all 64 complete once replies pass")
    void issuesSixtyFourClaimsWithoutWaiting() {
        AsyncDedupStore async = proxiedStore(Duration.ofSeconds(30)).async();
        // Open the reactive client's connections first, so the held replies are the claims' own.
        List<CompletableFuture<ClaimResult>> warmUp = new ArrayList<>();
        for (int i = 0; i < IN_FLIGHT; i++) {
            warmUp.add(async.claim("warm-up-" + i, LEASE).toCompletableFuture());
        }
        CompletableFuture.allOf(warmUp.toArray(CompletableFuture[]::new)).join();

        // Held far longer than issuing 64 calls takes: a call that waited for its reply could not have returned.
        proxy.delayReplies(Duration.ofSeconds(3));
        List<CompletableFuture<ClaimResult>> pending = new ArrayList<>();
        for (int i = 0; i < IN_FLIGHT; i++) {
            pending.add(async.claim("k-" + i, LEASE).toCompletableFuture());
        }

        assertThat(pending).as("stages returned before any reply passed the proxy").noneMatch(CompletableFuture::isDone);

        proxy.delayReplies(Duration.ZERO);
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
        assertThat(pending).allSatisfy(stage -> assertThat(stage.join()).isInstanceOf(Claim.class));
        assertThat(pending.stream().map(stage -> ((Claim) stage.join()).owner()).distinct()).hasSize(IN_FLIGHT);
    }

    @Test
    @DisplayName("with the server stopped, every async call fails its stage with a retryable DedupStoreException in time")
    void stoppedServerFailsTheStage() {
        Duration timeout = Duration.ofSeconds(1);
        AsyncDedupStore async = proxiedStore(timeout).async();
        Claim held = (Claim) async.claim("held", LEASE).toCompletableFuture().join();
        assertThatThrownBy(() -> async.claim("", LEASE)).as("bad input still throws at the call")
                .isInstanceOf(IllegalArgumentException.class);

        server.stop();
        List<CompletableFuture<?>> calls = List.of(
                async.claim("during", LEASE).toCompletableFuture(),
                async.claimAll(List.of("x", "y"), LEASE).toCompletableFuture(),
                async.complete(held, LEASE, null).toCompletableFuture(),
                async.extend(held, LEASE).toCompletableFuture(),
                async.release(held).toCompletableFuture(),
                async.inspect("held").toCompletableFuture(),
                async.forget("held").toCompletableFuture());
        long started = System.nanoTime();

        for (CompletableFuture<?> call : calls) {
            Throwable failure = call.handle((value, thrown) -> thrown).join();
            assertThat(failure).as("the stage's failure, unwrapped").isInstanceOf(DedupStoreException.class);
            assertThat(((DedupStoreException) failure).isRetryable()).as("retryable: " + failure).isTrue();
            assertThat(failure.getCause()).isInstanceOf(MongoException.class);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).as("ms until all had failed")
                .isLessThan(timeout.plusSeconds(2).toMillis());

        server.restart();
        try (MongoClient client = MongoFaultClients.client(proxy.host(), proxy.port(), timeout)) {
            MongoDedupStore.builder(client, DATABASE).validateIndexes(false).build().createIndexes();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Throwable failure = async.claim("after", LEASE).toCompletableFuture().handle((ok, thrown) -> thrown).join();
            if (failure == null) {
                break;
            }
            assertThat(failure).isInstanceOf(DedupStoreException.class);
            assertThat(System.nanoTime()).as("claims succeed again within 30 s of the restart").isLessThan(deadline);
        }
    }

    @Test
    @DisplayName("without a reactive client async() throws as before; a store opened by URI gets the native one")
    void asyncIsNativeOnlyWithAReactiveClient() {
        try (MongoClient client = MongoFaultClients.client(proxy.host(), proxy.port(), Duration.ofSeconds(5))) {
            MongoDedupStore blocking = MongoDedupStore.builder(client, DATABASE).build();
            assertThatThrownBy(blocking::async).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("AsyncDedupStore.onExecutor");
            try (com.mongodb.reactivestreams.client.MongoClient reactive =
                    com.mongodb.reactivestreams.client.MongoClients.create(server.url())) {
                assertThatThrownBy(() -> MongoDedupStore.builder(client, DATABASE)
                        .reactive(reactive.getDatabase("other")))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'other'");
            }
        }

        try (DedupStore byUri = DedupStores.open(server.url() + "/?database=" + DATABASE + "&namespace=uri")) {
            assertThat(byUri.async().claim("k", LEASE).toCompletableFuture().join()).isInstanceOf(Claim.class);
        }
    }
}
