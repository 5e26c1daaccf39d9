package dev.dedup.examples.readme;

import dev.dedup.DedupStore;
import dev.dedup.IdempotentConsumer;
import dev.dedup.ProcessingOutcome;
import dev.dedup.ResultCodec;

/** A handler whose effect is all that matters: nothing to replay. */
class AuditListener {
    record AuditEvent(String id, String text) {}

    private final IdempotentConsumer<AuditEvent, Void> consumer;

    AuditListener(DedupStore store) {
        consumer = IdempotentConsumer.builder(store, AuditEvent::id, ResultCodec.none()).build();
    }

    void write(AuditEvent event) {
        // side effect
    }

    boolean onMessage(AuditEvent event) {
        // readme:no-result
        ProcessingOutcome<Void> outcome = consumer.process(event, e -> {
            write(e);
            return null;   // ResultCodec.none(): a handler that returns nothing returns null
        });
        // end
        return outcome.shouldAck();
    }
}
