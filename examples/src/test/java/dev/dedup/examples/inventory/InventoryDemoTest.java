package dev.dedup.examples.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class InventoryDemoTest {

    @Test
    void idempotentConsumerReservesExactlyOncePerSkuWhileTheNaiveOneOverReserves() {
        DemoResult result = InventoryDemo.run(DemoConfig.defaults("memory:"));

        BrokerStats broker = result.idempotentDeliveries();
        assertThat(broker.crashesBeforeAck()).as("crashes before ack").isPositive();
        assertThat(broker.duplicatePublishes()).as("duplicate publishes").isPositive();
        assertThat(broker.undelivered()).as("undelivered").isZero();
        assertThat(result.outcomes().inProgressElsewhere())
                .as("4 consumer threads met a message and its duplicate at the same moment").isPositive();

        assertThat(result.idempotent().reserved()).containsExactlyEntriesOf(result.idempotent().expected());
        assertThat(result.idempotent().expected()).hasSize(DemoConfig.DEFAULT_SKUS);
        assertThat(result.naive().totalReserved()).isGreaterThan(result.naive().totalExpected());
        assertThat(result.exitCode()).isZero();
    }

    @Test
    void everyUniqueMessageIsProcessedOnceAndEveryOtherDeliveryIsRecognised() {
        DemoResult result = InventoryDemo.run(DemoConfig.defaults("memory:"));

        OutcomeCounts outcomes = result.outcomes();
        assertThat(outcomes.processed()).isEqualTo(result.uniqueMessages());
        assertThat(outcomes.alreadyProcessed() + outcomes.inProgressElsewhere())
                .isEqualTo(result.idempotentDeliveries().deliveries() - result.uniqueMessages());
        assertThat(outcomes.duplicatePublishesRecognised()).as("duplicate publishes recognised").isPositive();
        assertThat(outcomes.redeliveriesRecognised()).as("redeliveries after a crash recognised").isPositive();
        assertThat(outcomes.inProgressElsewhere()).as("nacked while in progress; each came back")
                .isEqualTo(result.idempotentDeliveries().nacks());
        assertThat(outcomes.failed() + outcomes.leaseLost()).isZero();
    }

    @Test
    void theSameSeedReplaysTheSameDeliveries() {
        DemoResult first = InventoryDemo.run(DemoConfig.defaults("memory:"));
        DemoResult second = InventoryDemo.run(DemoConfig.defaults("memory:"));

        // The naive consumer always acks, so its run depends on the seed alone; which of two concurrent copies
        // the idempotent consumer processes first may vary, its exactness may not.
        assertThat(second.naiveDeliveries()).isEqualTo(first.naiveDeliveries());
        assertThat(second.idempotent().exact()).isTrue();
        assertThat(second.naive().reserved()).isEqualTo(first.naive().reserved());
        assertThat(second.namespace()).as("each run gets a fresh namespace").isNotEqualTo(first.namespace());
    }

    @Test
    void reportShowsBothVerdictsAndRedactsTheStoreUri() {
        DemoResult result = InventoryDemo.run(DemoConfig.fromArgs("memory:?namespace=x", "--seed=7", "--messages=500"));

        String report = DemoReport.render(result);

        assertThat(result.config().seed()).isEqualTo(7);
        assertThat(result.uniqueMessages()).isEqualTo(500);
        assertThat(result.namespace()).startsWith("demo-");
        assertThat(report).contains("memory:?namespace=x", "OK (exact for every SKU)", "WRONG (over-reserved by");
    }

    @Test
    void aMatchingSumWithWrongSkusIsStillWrong() {
        // One SKU over-reserved and another under-reserved by as much: the totals agree, the stock does not.
        ConsumerResult offsetting = new ConsumerResult("offsetting consumer",
                new TreeMap<>(Map.of("SKU-01", 5L, "SKU-02", 3L)), new TreeMap<>(Map.of("SKU-01", 4L, "SKU-02", 4L)));

        assertThat(offsetting.totalReserved()).isEqualTo(offsetting.totalExpected());
        assertThat(offsetting.exact()).isFalse();
        assertThat(offsetting.skusOff()).isEqualTo(2);
    }
}
