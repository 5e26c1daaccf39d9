package dev.dedup.benchmarks.report;

import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * One loop of the Kafka benchmark: records/s with its 99.9% error (NaN with too few iterations), and polls/s.
 *
 * @param loop the {@code loop} parameter: no-dedup, adapter-redis, per-record-postgres, ...
 */
public record KafkaMeasurement(String loop, double recordsPerSecond, double error, double pollsPerSecond) {

    /** Whether {@code result} is one of KafkaBenchmark's. */
    public static boolean isKafka(RunResult result) {
        return result.getParams().getBenchmark().startsWith("dev.dedup.benchmarks.KafkaBenchmark.");
    }

    /** Reads a KafkaBenchmark result: its {@code records} secondary score is records/s. */
    public static KafkaMeasurement of(RunResult result) {
        Result<?> records = result.getSecondaryResults().get("records");
        if (records == null) {
            throw new IllegalArgumentException("no records score in " + result.getParams().getBenchmark());
        }
        return new KafkaMeasurement(result.getParams().getParam("loop"), records.getScore(), records.getScoreError(),
                result.getPrimaryResult().getScore());
    }

    /** The mean records per poll. */
    public double recordsPerPoll() {
        return recordsPerSecond / pollsPerSecond;
    }
}
