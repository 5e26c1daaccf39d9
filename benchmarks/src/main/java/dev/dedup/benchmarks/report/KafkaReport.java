package dev.dedup.benchmarks.report;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** The Kafka section of results.md: records/s per loop, and the targets of issue 23 (batch and inbox modes). */
public final class KafkaReport {
    /** The batch mode with Redis should keep at least this share of the no-dedup loop's records/s ... */
    static final double REDIS_SHARE = 0.5;
    /** ... and with PostgreSQL (the batch mode and the inbox) this share. */
    static final double POSTGRES_SHARE = 0.25;
    /** The batch mode should reach this multiple of the one-claim-per-record loop. */
    static final double BATCH_SPEED_UP = 5;

    private static final String[][] LABELS = {
        {"no-dedup", "no dedup: poll, handler, commitSync"},
        {"batch-redis", "batch mode (claimAll and settleAll per poll), Redis"},
        {"adapter-redis", "adapter (claimAll per poll), Redis"},
        {"per-record-redis", "one claim per record, Redis"},
        {"batch-postgres", "batch mode (claimAll and settleAll per poll), PostgreSQL"},
        {"inbox-postgres", "inbox (one transaction per poll), PostgreSQL"},
        {"adapter-postgres", "adapter (claimAll per poll), PostgreSQL"},
        {"per-record-postgres", "one claim per record, PostgreSQL"},
    };

    private KafkaReport() {}

    /** The section, or an empty string when no Kafka loop ran. */
    public static String render(List<KafkaMeasurement> measurements, boolean smoke) {
        if (measurements.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder();
        md.append("\n## Kafka adapter\n\n");
        md.append("One KafkaConsumer on one partition, up to 500 records per poll, a handler that only counts, and"
                + " commitSync after each poll; one thread. records/s counts the records polled, processed and"
                + " committed. ± is JMH's 99.9% error.\n\n");
        Optional<KafkaMeasurement> reference = find(measurements, "no-dedup");
        md.append("| loop | records/s | records per poll | vs no dedup |\n| --- | ---: | ---: | ---: |\n");
        for (String[] label : LABELS) {
            find(measurements, label[0]).ifPresent(m -> md.append("| ").append(label[1])
                    .append(" | ").append(withError(m))
                    .append(" | ").append(Numbers.grouped(m.recordsPerPoll()))
                    .append(" | ").append(reference.map(r -> Numbers.ratio(m.recordsPerSecond()
                            / r.recordsPerSecond())).orElse(""))
                    .append(" |\n"));
        }
        md.append("\n### Kafka targets (reported, not asserted)\n\n");
        if (smoke) {
            md.append("(Quick profile: the verdicts below only show that the checks run.)\n\n");
        }
        md.append("| target | measured | verdict |\n| --- | ---: | --- |\n");
        share(md, measurements, "batch-redis", "batch mode with Redis >= 0.5x the no-dedup loop", REDIS_SHARE);
        share(md, measurements, "batch-postgres", "batch mode with PostgreSQL >= 0.25x the no-dedup loop",
                POSTGRES_SHARE);
        share(md, measurements, "inbox-postgres", "inbox with PostgreSQL >= 0.25x the no-dedup loop",
                POSTGRES_SHARE);
        speedUp(md, measurements, "redis", "Redis");
        speedUp(md, measurements, "postgres", "PostgreSQL");
        return md.toString();
    }

    private static void share(StringBuilder md, List<KafkaMeasurement> measurements, String loop, String target,
            double wanted) {
        Optional<KafkaMeasurement> reference = find(measurements, "no-dedup");
        Optional<KafkaMeasurement> adapter = find(measurements, loop);
        if (reference.isPresent() && adapter.isPresent()) {
            double share = adapter.get().recordsPerSecond() / reference.get().recordsPerSecond();
            verdict(md, target, String.format(Locale.ROOT, "%.3fx", share), share >= wanted);
        }
    }

    private static void speedUp(StringBuilder md, List<KafkaMeasurement> measurements, String store, String name) {
        Optional<KafkaMeasurement> batch = find(measurements, "batch-" + store);
        Optional<KafkaMeasurement> single = find(measurements, "per-record-" + store);
        if (batch.isPresent() && single.isPresent()) {
            double speedUp = batch.get().recordsPerSecond() / single.get().recordsPerSecond();
            verdict(md, "batch mode >= 5x one claim per record, " + name,
                    String.format(Locale.ROOT, "%.1fx", speedUp), speedUp >= BATCH_SPEED_UP);
        }
    }

    private static void verdict(StringBuilder md, String target, String measured, boolean met) {
        md.append("| ").append(target).append(" | ").append(measured).append(" | ")
                .append(met ? "met" : "**missed**").append(" |\n");
    }

    private static Optional<KafkaMeasurement> find(List<KafkaMeasurement> measurements, String loop) {
        return measurements.stream().filter(m -> m.loop().equals(loop)).findFirst();
    }

    private static String withError(KafkaMeasurement m) {
        String score = Numbers.grouped(m.recordsPerSecond());
        return Double.isNaN(m.error()) || Double.isInfinite(m.error()) ? score
                : score + " ± " + Numbers.grouped(m.error());
    }
}
