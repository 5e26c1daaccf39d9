package dev.dedup.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.results.RunResult;

/** The async API's section of results.md: each store's depth-64 claims beside its driver's, and the target. */
public final class AsyncReport {
    private static final String PREFIX = "dev.dedup.benchmarks.AsyncDepthBenchmark.";
    /** The store's async claims should reach at least this share of the driver's own async write-if-absent. */
    static final double SHARE = 0.8;

    private AsyncReport() {}

    /** Whether {@code result} is one of AsyncDepthBenchmark's. */
    public static boolean isAsync(RunResult result) {
        return result.getParams().getBenchmark().startsWith(PREFIX);
    }

    /** One store at one depth: its async claims/s and the driver's own async write-if-absent/s. */
    public record Cell(String store, int depth, double storeScore, double rawScore) {}

    /** Pairs each store's result with its driver's at the same depth. */
    public static List<Cell> cells(List<RunResult> results) {
        List<Cell> cells = new ArrayList<>();
        for (RunResult store : of(results, "storeClaim")) {
            String name = store.getParams().getParam("store");
            String depth = store.getParams().getParam("depth");
            of(results, "rawSetNxPx").stream()
                    .filter(raw -> name.equals(raw.getParams().getParam("store"))
                            && depth.equals(raw.getParams().getParam("depth")))
                    .findFirst()
                    .ifPresent(raw -> cells.add(new Cell(name, Integer.parseInt(depth), score(store), score(raw))));
        }
        return cells;
    }

    /** The section, or an empty string when no async benchmark ran. */
    public static String render(List<Cell> cells, boolean smoke) {
        if (cells.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder();
        md.append("\n## Async API, claims in flight from one thread\n\n");
        md.append("One caller thread keeps `depth` fresh-key claims in flight: `store.async().claim(key, lease)` beside"
                + " the driver's own asynchronous write-if-absent (Lettuce `SET NX PX`) on the same connection."
                + " Target (reported, not asserted): the store at >= 0.8x the driver.");
        if (smoke) {
            md.append(" (Quick profile: the verdicts only show that the checks run.)");
        }
        md.append("\n\n| store | depth | store ops/s | raw ops/s | store / raw | verdict |\n"
                + "| --- | ---: | ---: | ---: | ---: | --- |\n");
        for (Cell cell : cells) {
            double share = cell.storeScore() / cell.rawScore();
            md.append("| ").append(cell.store()).append(" | ").append(cell.depth()).append(" | ")
                    .append(format(cell.storeScore())).append(" | ").append(format(cell.rawScore())).append(" | ")
                    .append(String.format(Locale.ROOT, "%.2f", share)).append(" | ")
                    .append(share >= SHARE ? "met" : "**missed**").append(" |\n");
        }
        return md.toString();
    }

    private static List<RunResult> of(List<RunResult> results, String method) {
        return results.stream().filter(result -> result.getParams().getBenchmark().equals(PREFIX + method)).toList();
    }

    private static double score(RunResult result) {
        return result.getPrimaryResult().getScore();
    }

    private static String format(double value) {
        return String.format(Locale.ROOT, "%,.0f", value);
    }
}
