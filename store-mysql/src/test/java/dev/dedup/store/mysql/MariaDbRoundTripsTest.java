package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.Settlement;
import dev.dedup.tck.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What each call costs in round trips, counted as delayed replies: every reply from the server is held 200 ms by a
 * proxy, so a call's duration says how many statements it waited for. A fresh claim learns that it won from the
 * insert statement's own reply (the insert id); only a duplicate reads the record in a second statement.
 */
class MariaDbRoundTripsTest {
    private static final Duration DELAY = Duration.ofMillis(200);

    @Test
    @DisplayName("fresh claim: one round trip; duplicate: two; claimAll of 50 two, settleAll of 20 one (pipelined)")
    void roundTripsPerCall() {
        URI server = MariaDbTestSupport.address();
        try (FaultProxy proxy = FaultProxy.start(server.getHost(), server.getPort());
                HikariDataSource pool = poolVia(proxy, server);
                DedupStore store = MysqlDedupStore.builder(pool).namespace("round-trips").createSchema(true).build()) {
            String key = "k-" + UUID.randomUUID();
            store.inspect(key); // the pool's connection is made and checked before the replies slow down
            // The store's first settleAll asks the driver once whether it counts each row of a batch: asked here.
            store.settleAll(List.of(Settlement.release((Claim) store.claim("warm-" + key, Duration.ofMinutes(1)))));
            proxy.delayReplies(DELAY);

            Duration fresh = timed(() -> store.claim(key, Duration.ofMinutes(1)));
            Duration duplicate = timed(() -> assertThat(store.claim(key, Duration.ofMinutes(1)))
                    .isInstanceOf(Duplicate.class));
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                keys.add("b-" + UUID.randomUUID());
            }
            List<ClaimResult> batch = new ArrayList<>();
            Duration claimAll = timed(() -> batch.addAll(store.claimAll(keys, Duration.ofMinutes(1))));
            List<Settlement> completes = batch.subList(0, 20).stream()
                    .map(claim -> Settlement.complete((Claim) claim, Duration.ofMinutes(1), null)).toList();
            Duration settleAll = timed(() -> assertThat(store.settleAll(completes)).containsOnly(true));

            assertThat(fresh).as("fresh claim").isLessThan(DELAY.multipliedBy(2));
            assertThat(duplicate).as("duplicate").isBetween(DELAY.multipliedBy(2), DELAY.multipliedBy(3));
            assertThat(claimAll).as("claimAll of 50").isBetween(DELAY.multipliedBy(2), DELAY.multipliedBy(3));
            // Pipelined: 20 statements out, 20 replies back; the proxy may hold them as two segments, never 20.
            assertThat(settleAll).as("settleAll of 20").isLessThan(DELAY.multipliedBy(3));
        }
    }

    private static Duration timed(Runnable call) {
        long start = System.nanoTime();
        call.run();
        return Duration.ofNanos(System.nanoTime() - start);
    }

    private static HikariDataSource poolVia(FaultProxy proxy, URI server) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:mariadb://" + proxy.host() + ":" + proxy.port() + server.getPath() + "?"
                + server.getQuery());
        config.setMaximumPoolSize(1);
        return new HikariDataSource(config);
    }
}
