package dev.dedup.examples.inventory;

import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Reserves each message id once, however often the broker delivers it, by claiming the id in a dedup store. */
final class IdempotentReservationConsumer implements SimulatedBroker.Subscriber {
    private static final Logger log = LoggerFactory.getLogger(IdempotentReservationConsumer.class);

    private final IdempotentConsumer<ReserveStock, String> consumer;
    private final Inventory inventory;
    private OutcomeCounts outcomes = OutcomeCounts.NONE;

    IdempotentReservationConsumer(DedupStore store, Inventory inventory) {
        // Retention must outlast the broker's redelivery window; a day is far beyond this demo's.
        this.consumer = IdempotentConsumer.builder(store, ReserveStock::messageId, ResultCodec.utf8())
                .lease(Duration.ofSeconds(30))
                .retention(Duration.ofDays(1))
                .build();
        this.inventory = inventory;
    }

    @Override
    public boolean deliver(ReserveStock message, SimulatedBroker.Kind kind) {
        ProcessingOutcome<String> outcome = consumer.process(message, m -> {
            Inventory.takeAMoment();
            return inventory.reserve(m.sku(), m.quantity());
        });
        synchronized (this) {
            outcomes = outcomes.plus(outcome, kind);
        }
        if (outcome instanceof ProcessingOutcome.Failed<String> failed) {
            log.warn("reserving {} failed; nacking so the broker redelivers it", failed.key(), failed.cause());
        }
        return outcome.shouldAck();
    }

    synchronized OutcomeCounts outcomes() {
        return outcomes;
    }
}
