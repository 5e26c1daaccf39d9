package dev.dedup.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.openjdk.jmh.results.RunResult;

/**
 * The peer section of results.md: per operation and thread count, the PostgreSQL store, the raw insert and Spring
 * Integration's JDBC metadata store from one run, and whether the store is ahead of the peer.
 */
public final class PeerReport {
    private static final String PREFIX = "dev.dedup.benchmarks.PeerBenchmark.";
    private static final List<Operation> OPERATIONS = List.of(Operation.CLAIM_FRESH_KEY,
            Operation.CLAIM_LIVE_DUPLICATE);

    private PeerReport() {}

    /** Whether {@code result} is one of PeerBenchmark's. */
    public static boolean isPeer(RunResult result) {
        return result.getParams().getBenchmark().startsWith(PREFIX);
    }

    /** One operation at one thread count: each side's ops/s (NaN when that side did not run). */
    public record Cell(Operation operation, int threads, double dedup, double raw, double springIntegration) {}

    /** Lines up the three sides of each operation and thread count, in operation then thread order. */
    public static List<Cell> cells(List<RunResult> results) {
        List<Cell> cells = new ArrayList<>();
        for (Operation operation : OPERATIONS) {
            results.stream().filter(result -> result.getParams().getBenchmark().equals(method("dedup", operation)))
                    .map(result -> result.getParams().getThreads()).distinct().sorted()
                    .forEach(threads -> cells.add(new Cell(operation, threads,
                            score(results, method("dedup", operation), threads),
                            score(results, method("raw", operation), threads),
                            score(results, method("springIntegration", operation), threads))));
        }
        return cells;
    }

    /** PeerBenchmark's method for one side of {@code operation}: the side, then the operation's method name. */
    private static String method(String side, Operation operation) {
        String name = operation.method();
        return PREFIX + side + Character.toUpperCase(name.charAt(0)) + name.substring(1);
    }

    /** The section, or an empty string when the peer did not run. */
    public static String render(List<Cell> cells, boolean smoke) {
        if (cells.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder();
        md.append("\n## PostgreSQL beside Spring Integration's JDBC metadata store\n\n");
        md.append("One run on one pool and an empty table: the store's `claim`, the raw `INSERT ... ON CONFLICT DO"
                + " NOTHING`, and Spring Integration's `JdbcMetadataStore.putIfAbsent` (its own table and schema,"
                + " no transaction manager: each statement commits on its own). The peer remembers a key only: no"
                + " lease, expiry, owner or result. Target (reported, not asserted): the store ahead of the peer.");
        if (smoke) {
            md.append(" (Quick profile: the verdicts only show that the checks run.)");
        }
        md.append("\n\n| operation | threads | dedup ops/s | raw ops/s | Spring Integration ops/s | dedup / raw"
                + " | dedup / Spring Integration | verdict |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        for (Cell cell : cells) {
            double ahead = cell.dedup() / cell.springIntegration();
            md.append("| ").append(cell.operation().label()).append(" | ").append(cell.threads()).append(" | ")
                    .append(Numbers.grouped(cell.dedup())).append(" | ").append(Numbers.grouped(cell.raw()))
                    .append(" | ").append(Numbers.grouped(cell.springIntegration())).append(" | ")
                    .append(Numbers.ratio(cell.dedup() / cell.raw())).append(" | ").append(Numbers.ratio(ahead))
                    .append(" | ").append(Double.isNaN(ahead) ? "n/a" : ahead >= 1 ? "ahead" : "**behind**")
                    .append(" |\n");
        }
        return md.toString();
    }

    private static double score(List<RunResult> results, String method, int threads) {
        Optional<RunResult> found = results.stream()
                .filter(result -> result.getParams().getBenchmark().equals(method)
                        && result.getParams().getThreads() == threads)
                .findFirst();
        return found.map(result -> result.getPrimaryResult().getScore()).orElse(Double.NaN);
    }
}
