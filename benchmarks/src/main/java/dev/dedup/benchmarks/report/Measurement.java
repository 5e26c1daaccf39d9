package dev.dedup.benchmarks.report;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * One JMH result: which side (dedup store or raw baseline), store, table size, operation and thread count, and the
 * throughput with its 99.9% error (NaN when there were too few iterations to tell).
 */
public record Measurement(boolean baseline, String store, int prefilledRows, Operation operation, int threads,
        double score, double error) {

    /** Reads a result of {@code StoreBenchmark} or {@code BaselineBenchmark}. */
    public static Measurement of(RunResult result) {
        BenchmarkParams params = result.getParams();
        String benchmark = params.getBenchmark(); // dev.dedup.benchmarks.StoreBenchmark.claimFreshKey
        String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
        String type = benchmark.substring(0, benchmark.lastIndexOf('.'));
        Result<?> primary = result.getPrimaryResult();
        return new Measurement(type.endsWith("BaselineBenchmark"), params.getParam("store"),
                Integer.parseInt(params.getParam("prefilledRows")), Operation.ofMethod(method), params.getThreads(),
                primary.getScore(), primary.getScoreError());
    }
}
