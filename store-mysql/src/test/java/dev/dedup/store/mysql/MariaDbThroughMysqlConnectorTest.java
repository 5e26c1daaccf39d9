package dev.dedup.store.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import com.mysql.cj.jdbc.MysqlDataSource;
import dev.dedup.Claim;
import dev.dedup.ClaimResult;
import dev.dedup.DedupStore;
import dev.dedup.Duplicate;
import dev.dedup.RecordState;
import dev.dedup.Settlement;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store through MySQL Connector/J, against MariaDB (no MySQL server runs here): the statements and the way the
 * claim learns it won (the insert id) do not depend on MariaDB's driver.
 */
class MariaDbThroughMysqlConnectorTest {

    @Test
    @DisplayName("claim, duplicate, take-over, claimAll and settleAll work through MySQL Connector/J")
    void worksThroughTheMysqlDriver() throws Exception {
        URI address = MariaDbTestSupport.address();
        MysqlDataSource dataSource = new MysqlDataSource();
        dataSource.setUrl("jdbc:mysql://" + address.getAuthority() + address.getPath() + "?" + address.getQuery());
        try (DedupStore store = MysqlDedupStore.builder(dataSource).namespace("connector-j").createSchema(true)
                .build()) {
            String key = "k-" + UUID.randomUUID();
            Claim claim = (Claim) store.claim(key, Duration.ofMillis(50));
            assertThat(store.claim(key, Duration.ofMinutes(1))).isInstanceOf(Duplicate.class);
            Thread.sleep(100);
            Claim takeOver = (Claim) store.claim(key, Duration.ofMinutes(1));
            assertThat(store.complete(claim, Duration.ofMinutes(1), null)).isFalse();

            List<ClaimResult> batch = store.claimAll(List.of(key, "b-" + UUID.randomUUID()), Duration.ofMinutes(1));
            assertThat(batch.get(0)).isInstanceOf(Duplicate.class);
            Claim fresh = (Claim) batch.get(1);
            assertThat(store.settleAll(List.of(Settlement.complete(takeOver, Duration.ofMinutes(1), null),
                    Settlement.release(fresh)))).containsExactly(true, true);
            assertThat(((Duplicate) store.claim(key, Duration.ofMinutes(1))).state()).isEqualTo(RecordState.COMPLETED);
        }
    }
}
