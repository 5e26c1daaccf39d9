package dev.dedup.examples.inventory;

import java.util.Locale;

/** Renders a {@link DemoResult} as the short text report the demo prints. */
final class DemoReport {

    private DemoReport() {}

    static String render(DemoResult result) {
        StringBuilder out = new StringBuilder();
        BrokerStats broker = result.idempotentDeliveries();
        line(out, "dedup inventory demo: reserving stock under an at-least-once broker");
        line(out, "  store                  %s (namespace %s)", result.redactedStoreUri(), result.namespace());
        line(out, "  seed                   %d", result.config().seed());
        line(out, "  consumer threads       %d (a message and its duplicate may be processed at the same moment)",
                result.config().consumers());
        line(out, "");
        line(out, "broker");
        count(out, "messages published", broker.published());
        count(out, "unique messages", result.uniqueMessages());
        count(out, "deliveries", broker.deliveries());
        count(out, "duplicate publishes", broker.duplicatePublishes());
        count(out, "crashes before ack", broker.crashesBeforeAck());
        count(out, "redeliveries", broker.redeliveries());
        count(out, "nacks", broker.nacks());
        if (broker.undelivered() > 0) {
            count(out, "given up, undelivered", broker.undelivered());
        }
        line(out, "  (the naive run had %,d deliveries: it never nacks, so nothing in progress comes back)",
                result.naiveDeliveries().deliveries());
        line(out, "");
        line(out, "reserved stock over %d SKUs      reserved   expected", result.idempotent().expected().size());
        consumer(out, result.naive());
        consumer(out, result.idempotent());
        line(out, "  The naive consumer reserves on every delivery: each duplicate publish and each redelivery after");
        line(out, "  a crash before the ack reserves again. The idempotent one claims the message id first.");
        line(out, "");
        line(out, "idempotent consumer outcomes");
        OutcomeCounts outcomes = result.outcomes();
        count(out, "processed", outcomes.processed());
        count(out, "already processed", outcomes.alreadyProcessed());
        count(out, "  a duplicate publish", outcomes.duplicatePublishesRecognised());
        count(out, "  a redelivery", outcomes.redeliveriesRecognised());
        count(out, "in progress elsewhere", outcomes.inProgressElsewhere());
        line(out, "    (nacked: another consumer thread held the key; the broker redelivered it later)");
        count(out, "failed", outcomes.failed());
        count(out, "lease lost", outcomes.leaseLost());
        line(out, "");
        line(out, "finished in %d ms: %s", result.elapsed().toMillis(), result.exitCode() == 0
                ? "the idempotent consumer reserved exactly once per message"
                : "the idempotent consumer's reservations are WRONG");
        return out.toString();
    }

    private static void consumer(StringBuilder out, ConsumerResult consumer) {
        line(out, "  %-26s %,10d %,10d   %s", consumer.name(), consumer.totalReserved(), consumer.totalExpected(),
                verdict(consumer));
    }

    private static String verdict(ConsumerResult consumer) {
        if (consumer.exact()) {
            return "OK (exact for every SKU)";
        }
        long difference = consumer.totalReserved() - consumer.totalExpected();
        String sum = difference > 0 ? String.format(Locale.ROOT, "over-reserved by %,d", difference)
                : difference < 0 ? String.format(Locale.ROOT, "under-reserved by %,d", -difference)
                : "total matches";
        return String.format(Locale.ROOT, "WRONG (%s; %d SKUs off)", sum, consumer.skusOff());
    }

    private static void count(StringBuilder out, String label, long value) {
        line(out, "  %-22s %,7d", label, value);
    }

    private static void line(StringBuilder out, String format, Object... args) {
        out.append(String.format(Locale.ROOT, format, args)).append(System.lineSeparator());
    }
}
