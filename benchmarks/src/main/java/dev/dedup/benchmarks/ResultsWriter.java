package dev.dedup.benchmarks;

import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.report.AsyncReport;
import dev.dedup.benchmarks.report.KafkaMeasurement;
import dev.dedup.benchmarks.report.KafkaReport;
import dev.dedup.benchmarks.report.Machine;
import dev.dedup.benchmarks.report.MarkdownReport;
import dev.dedup.benchmarks.report.Measurement;
import dev.dedup.benchmarks.report.OutboxReport;
import dev.dedup.benchmarks.report.PeerReport;
import dev.dedup.benchmarks.report.ReportContext;
import dev.dedup.benchmarks.report.Row;
import dev.dedup.benchmarks.report.SvgChart;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;

/**
 * Writes a run's three files: results.json with JMH's own JSON writer, then results.md (the stores, then the
 * PostgreSQL peer's, the async API's, the Kafka adapter's and the outbox's sections) and results.svg (the stores).
 */
final class ResultsWriter {
    private ResultsWriter() {}

    static void write(Path directory, List<RunResult> results, Profile profile, List<BenchStore> stores,
            String failure) throws IOException {
        Files.createDirectories(directory);
        try (PrintStream json = new PrintStream(Files.newOutputStream(directory.resolve("results.json")), false,
                StandardCharsets.UTF_8)) {
            ResultFormatFactory.getInstance(ResultFormatType.JSON, json).writeOut(results);
        }

        List<Measurement> measurements = results.stream()
                .filter(result -> !KafkaMeasurement.isKafka(result) && !OutboxReport.isOutbox(result)
                        && !AsyncReport.isAsync(result) && !PeerReport.isPeer(result))
                .map(Measurement::of).toList();
        List<RunResult> outbox = results.stream().filter(OutboxReport::isOutbox).toList();
        List<AsyncReport.Cell> async = AsyncReport.cells(results.stream().filter(AsyncReport::isAsync).toList());
        List<PeerReport.Cell> peer = PeerReport.cells(results.stream().filter(PeerReport::isPeer).toList());
        List<KafkaMeasurement> kafka = results.stream().filter(KafkaMeasurement::isKafka)
                .map(KafkaMeasurement::of).toList();
        List<String> storeOrder = stores.stream().map(BenchStore::param).toList();
        List<Row> rows = Row.pair(measurements, storeOrder);
        ReportContext context = new ReportContext(
                "dedup benchmarks, " + ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z"))
                        + ", " + profile.name() + " profile",
                profile.describe(), Machine.describe(), notes(stores, failure), profile == Profile.QUICK);
        Files.writeString(directory.resolve("results.md"), MarkdownReport.render(rows, context)
                + PeerReport.render(peer, profile == Profile.QUICK)
                + AsyncReport.render(async, profile == Profile.QUICK)
                + KafkaReport.render(kafka, profile == Profile.QUICK)
                + OutboxReport.render(outbox, profile == Profile.QUICK));
        Files.writeString(directory.resolve("results.svg"), SvgChart.render(rows, context));
    }

    private static List<String> notes(List<BenchStore> stores, String failure) {
        List<String> notes = new ArrayList<>();
        if (failure != null) {
            notes.add("INCOMPLETE RUN: " + failure);
        }
        for (BenchStore store : stores) {
            notes.add(store.param() + ": " + store.summary());
        }
        return notes;
    }
}
