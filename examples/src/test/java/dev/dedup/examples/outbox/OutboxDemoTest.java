package dev.dedup.examples.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.tck.TestServers;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The outbox demo on the real PostgreSQL and Kafka: every committed order shipped once, none rolled back. */
class OutboxDemoTest {

    @Test
    @DisplayName("committed orders are shipped exactly once, rolled-back ones never, republished events absorbed")
    void everyCommittedOrderShipsOnce() throws Exception {
        String url = TestServers.require("PostgreSQL 15", "DEDUP_TEST_POSTGRES_URL", null);
        String kafka = TestServers.require("Kafka", "DEDUP_TEST_KAFKA_BOOTSTRAP", null);

        OutboxDemo.Result result = OutboxDemo.run(url, kafka, 200, 7);

        assertThat(result.rolledBack()).isPositive();
        assertThat(result.appended()).isEqualTo(result.orders() - result.rolledBack());
        assertThat(result.applied()).isEqualTo(result.appended());
        assertThat(result.republished()).isPositive();
        assertThat(result.duplicatesAbsorbed()).isEqualTo(result.republished());
        assertThat(result.received()).isEqualTo(result.appended() + result.republished());
        assertThat(result.shipped()).isEqualTo(result.reserved());
        assertThat(result.exact()).isTrue();
    }
}
