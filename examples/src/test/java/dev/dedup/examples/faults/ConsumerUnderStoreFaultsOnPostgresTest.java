package dev.dedup.examples.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.DedupStore;
import dev.dedup.DedupStoreException;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import dev.dedup.store.postgres.PostgresDedupStore;
import dev.dedup.tck.FaultProxy;
import dev.dedup.tck.TestServers;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The facade on the real PostgreSQL with a {@link FaultProxy} between the consumer's pool and the server: refused
 * connections, lost replies and slow replies at each step of a delivery. Whatever the fault, every delivery ends
 * in an outcome, and the handler's effect happens once, or twice only where the outcome says so ({@code LeaseLost}).
 */
class ConsumerUnderStoreFaultsOnPostgresTest {
    private static final Duration LEASE = Duration.ofSeconds(2);

    private final AtomicInteger effects = new AtomicInteger();
    private FaultProxy proxy;
    private HikariDataSource faultyPool;
    private HikariDataSource directPool;
    private IdempotentConsumer<String, String> consumer;
    private IdempotentConsumer<String, String> directConsumer;

    @BeforeEach
    void connectThroughTheProxy() {
        String jdbcUrl = TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);
        URI server = URI.create(jdbcUrl.substring("jdbc:".length()));
        proxy = FaultProxy.start(server.getHost(), server.getPort());
        String table = "faults_" + UUID.randomUUID().toString().substring(0, 8);
        String namespace = "faults";
        directPool = pool(jdbcUrl);
        DedupStore direct = PostgresDedupStore.builder(directPool).table(table).namespace(namespace)
                .validateSchema(false).build();
        ((PostgresDedupStore) direct).createSchema();
        faultyPool = pool(jdbcUrl.replace(server.getHost() + ":" + server.getPort(),
                proxy.host() + ":" + proxy.port()));
        DedupStore faulty = PostgresDedupStore.builder(faultyPool).table(table).namespace(namespace)
                .timeout(Duration.ofSeconds(1)).validateSchema(false).build();
        consumer = consumerOn(faulty);
        directConsumer = consumerOn(direct);
    }

    @AfterEach
    void close() {
        proxy.close();
        faultyPool.close();
        directPool.close();
    }

    private static HikariDataSource pool(String jdbcUrl) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl + "&socketTimeout=2&connectTimeout=1");
        config.setMaximumPoolSize(2);
        config.setConnectionTimeout(1_000);
        config.setValidationTimeout(500);
        config.setInitializationFailTimeout(-1);
        return new HikariDataSource(config);
    }

    private IdempotentConsumer<String, String> consumerOn(DedupStore store) {
        return IdempotentConsumer.builder(store, (String key) -> key, ResultCodec.utf8())
                .lease(LEASE).retention(Duration.ofMinutes(5)).build();
    }

    private String applyEffect(String key) {
        effects.incrementAndGet();
        return "applied " + key;
    }

    /** Redelivers until the delivery is settled (done here or before), as a broker would after a nack. */
    private ProcessingOutcome<String> redeliverUntilSettled(IdempotentConsumer<String, String> on, String key)
            throws InterruptedException {
        Instant deadline = Instant.now().plus(LEASE.multipliedBy(4));
        while (true) {
            ProcessingOutcome<String> outcome = on.process(key, this::applyEffect);
            if (outcome.shouldAck()) {
                return outcome;
            }
            assertThat(Instant.now()).as("settled within a few leases; last outcome " + outcome).isBefore(deadline);
            Thread.sleep(100);
        }
    }

    @Test
    @DisplayName("store refusing connections at the claim: Failed, handler not run, processed once after it heals")
    void refusedAtClaim() throws Exception {
        proxy.refuseConnections(true);
        proxy.cutConnections();
        faultyPool.getHikariPoolMXBean().softEvictConnections();

        ProcessingOutcome<String> outcome = consumer.process("refused", this::applyEffect);

        assertThat(outcome).isInstanceOf(ProcessingOutcome.Failed.class);
        assertThat(((ProcessingOutcome.Failed<String>) outcome).cause()).isInstanceOf(DedupStoreException.class);
        assertThat(effects).hasValue(0);
        proxy.heal();
        assertThat(redeliverUntilSettled(consumer, "refused")).isInstanceOf(ProcessingOutcome.Processed.class);
        assertThat(effects).hasValue(1);
    }

    @Test
    @DisplayName("lost reply to the claim: the effect still happens exactly once over the redeliveries")
    void lostClaimReply() throws Exception {
        consumer.process("warm-up", this::applyEffect);
        effects.set(0);
        proxy.loseNextReply();

        ProcessingOutcome<String> first = consumer.process("lost-claim", this::applyEffect);
        ProcessingOutcome<String> settled = redeliverUntilSettled(directConsumer, "lost-claim");

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(first).isNotInstanceOf(ProcessingOutcome.LeaseLost.class);
        assertThat(settled).isInstanceOfAny(ProcessingOutcome.Processed.class,
                ProcessingOutcome.AlreadyProcessed.class);
        assertThat(effects).hasValue(1);
    }

    @Test
    @DisplayName("lost reply to the completion: LeaseLost or Processed, and the redelivery does not run it again")
    void lostCompleteReply() throws Exception {
        consumer.process("warm-up", this::applyEffect);
        effects.set(0);

        ProcessingOutcome<String> outcome = consumer.process("lost-complete", key -> {
            proxy.loseNextReply();
            return applyEffect(key);
        });
        ProcessingOutcome<String> redelivered = directConsumer.process("lost-complete", this::applyEffect);

        assertThat(proxy.lostReplies()).isEqualTo(1);
        assertThat(outcome).isInstanceOfAny(ProcessingOutcome.Processed.class, ProcessingOutcome.LeaseLost.class);
        assertThat(outcome.shouldAck()).isTrue();
        assertThat(redelivered).isEqualTo(new ProcessingOutcome.AlreadyProcessed<>("lost-complete",
                java.util.Optional.of("applied lost-complete")));
        assertThat(effects).hasValue(1);
    }

    @Test
    @DisplayName("replies slower than the store timeout at completion: LeaseLost with the store failure, no rerun")
    void slowCompletion() throws Exception {
        consumer.process("warm-up", this::applyEffect);
        effects.set(0);

        ProcessingOutcome<String> outcome = consumer.process("slow-complete", key -> {
            proxy.delayReplies(Duration.ofSeconds(3));
            return applyEffect(key);
        });
        proxy.heal();
        ProcessingOutcome<String> redelivered = redeliverUntilSettled(directConsumer, "slow-complete");

        assertThat(outcome).isInstanceOf(ProcessingOutcome.LeaseLost.class);
        assertThat(((ProcessingOutcome.LeaseLost<String>) outcome).storeFailure()).isPresent();
        // The completion reached the server before its reply was held back: the key is done, not run again.
        assertThat(redelivered).isInstanceOf(ProcessingOutcome.AlreadyProcessed.class);
        assertThat(effects).hasValue(1);
    }

    @Test
    @DisplayName("extends that cannot get through: the lease lapses, another consumer runs it, and the first is told")
    void extendsBlockedUntilTheLeaseLapses() throws Exception {
        consumer.process("warm-up", this::applyEffect);
        effects.set(0);

        ProcessingOutcome<String> slowFirst = consumer.process("stuck-extends", key -> {
            proxy.refuseConnections(true);
            proxy.cutConnections();
            Thread.sleep(LEASE.toMillis() + 500);
            ProcessingOutcome<String> takeover = directConsumer.process(key, this::applyEffect);
            assertThat(takeover).as("the other consumer, after the lease lapsed")
                    .isInstanceOf(ProcessingOutcome.Processed.class);
            proxy.heal();
            return applyEffect(key);
        });

        assertThat(slowFirst).as("the first consumer learns it may have run twice")
                .isInstanceOf(ProcessingOutcome.LeaseLost.class);
        assertThat(effects).as("the documented limit: two runs, both reported").hasValue(2);
    }
}
