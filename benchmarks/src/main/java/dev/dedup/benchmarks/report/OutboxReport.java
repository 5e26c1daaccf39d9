package dev.dedup.benchmarks.report;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.util.Statistics;

/** The outbox section of results.md: the seven scores and the targets. */
public final class OutboxReport {
    private static final String PREFIX = "dev.dedup.benchmarks.OutboxBenchmark.";
    /** A transaction with the append should take at most this multiple of the same transaction without it. */
    static final double APPEND_RATIO = 1.3;
    /** The relay should reach at least this share of the bare producer's events/s. */
    static final double RELAY_SHARE = 0.5;

    private OutboxReport() {}

    /** Whether {@code result} is one of OutboxBenchmark's. */
    public static boolean isOutbox(RunResult result) {
        return result.getParams().getBenchmark().startsWith(PREFIX);
    }

    /** The section, or an empty string when no outbox benchmark ran. */
    public static String render(List<RunResult> results, boolean smoke) {
        if (results.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder();
        md.append("\n## Transactional outbox\n\n");
        md.append("PostgreSQL, Kafka and RabbitMQ, one thread. A business transaction is one UPDATE of a stock row and a commit,"
                + " on a connection from a HikariCP pool; the relay publishes a committed backlog of 100 events per"
                + " cycle; the bare producer sends 100 records with the same settings (idempotent, acks=all) and"
                + " awaits them; on RabbitMQ the relay's publisher awaits each event's confirm, the bare channel in"
                + " confirm mode publishes 100 messages and awaits their confirms at once (a capped, non-durable queue);"
                + " end to end is commit to a KafkaConsumer receiving the event, the relay woken by"
                + " LISTEN/NOTIFY. ± is JMH's 99.9% error.\n\n");
        md.append("| benchmark | score | unit |\n| --- | ---: | --- |\n");
        for (RunResult result : results) {
            var primary = result.getPrimaryResult();
            String error = Double.isFinite(primary.getScoreError())
                    ? " ± " + format(primary.getScoreError()) : "";
            md.append("| ").append(name(result)).append(" | ").append(format(primary.getScore())).append(error)
                    .append(" | ").append(primary.getScoreUnit()).append(" |\n");
        }
        md.append("\n### Outbox targets (reported, not asserted)\n\n");
        if (smoke) {
            md.append("(Quick profile: the verdicts below only show that the checks run.)\n\n");
        }
        md.append("| target | measured | verdict |\n| --- | ---: | --- |\n");
        Optional<RunResult> plain = find(results, "businessTransaction");
        Optional<RunResult> append = find(results, "businessTransactionWithAppend");
        if (plain.isPresent() && append.isPresent()) {
            double ratio = score(append.get()) / score(plain.get());
            verdict(md, "transaction with append <= 1.3x without", String.format(Locale.ROOT, "%.2fx", ratio),
                    ratio <= APPEND_RATIO);
        }
        Optional<RunResult> relay = find(results, "relayBatch");
        Optional<RunResult> producer = find(results, "producerBatch");
        if (relay.isPresent() && producer.isPresent()) {
            double share = score(relay.get()) / score(producer.get());
            verdict(md, "relay at batch 100 >= 0.5x the bare producer, events/s",
                    String.format(Locale.ROOT, "%.2fx", share), share >= RELAY_SHARE);
        }
        for (RunResult rabbitRelay : all(results, "rabbitRelayBatch")) {
            String keys = rabbitRelay.getParams().getParam("keys");
            all(results, "rabbitPublisherBatch").stream()
                    .filter(publisher -> keys.equals(publisher.getParams().getParam("keys"))).findFirst()
                    .ifPresent(publisher -> {
                        double share = score(rabbitRelay) / score(publisher);
                        verdict(md, "RabbitMQ relay at batch 100, " + keys + " keys, >= 0.5x the bare confirming"
                                + " publisher, events/s", String.format(Locale.ROOT, "%.2fx", share),
                                share >= RELAY_SHARE);
                    });
        }
        find(results, "endToEnd").ifPresent(latency -> {
            Statistics samples = latency.getPrimaryResult().getStatistics();
            md.append("| commit to consumer, LISTEN/NOTIFY (no target) | p50 ")
                    .append(format(samples.getPercentile(50))).append(" ms, p99 ")
                    .append(format(samples.getPercentile(99))).append(" ms, ")
                    .append(samples.getN()).append(" samples | - |\n");
        });
        return md.toString();
    }

    private static String name(RunResult result) {
        return result.getParams().getBenchmark().substring(PREFIX.length());
    }

    private static Optional<RunResult> find(List<RunResult> results, String benchmark) {
        return all(results, benchmark).stream().findFirst();
    }

    private static List<RunResult> all(List<RunResult> results, String benchmark) {
        return results.stream().filter(result -> name(result).equals(benchmark)).toList();
    }

    private static double score(RunResult result) {
        return result.getPrimaryResult().getScore();
    }

    private static void verdict(StringBuilder md, String target, String measured, boolean met) {
        md.append("| ").append(target).append(" | ").append(measured).append(" | ")
                .append(met ? "met" : "**missed**").append(" |\n");
    }

    private static String format(double value) {
        return value >= 100 ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.2f", value);
    }
}
