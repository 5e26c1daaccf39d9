package dev.dedup.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * How long JMH measures. {@link #FULL} is sized for a 2-core machine (minutes, not hours) and run on an idle one;
 * {@link #QUICK} only proves that every benchmark runs: one short iteration, no fork, one thread.
 *
 * @param postgresTableSizes the {@code prefilledRows} values PostgreSQL runs with (the other stores run with 0)
 */
record Profile(String name, int forks, int warmupIterations, Duration warmupTime, int measurementIterations,
        Duration measurementTime, List<Integer> threads, List<Integer> postgresTableSizes) {

    static final Profile FULL = new Profile("full", 1, 1, Duration.ofSeconds(2), 3, Duration.ofSeconds(2),
            List.of(1, 4, 16), List.of(0, 1_000_000));

    /** A small pre-filled table still runs the pre-fill path, in a second rather than the 1M rows' many. */
    static final Profile QUICK = new Profile("quick", 0, 0, Duration.ZERO, 1, Duration.ofMillis(200), List.of(1),
            List.of(0, 10_000));

    static Profile named(String name) {
        return switch (name) {
            case "full" -> FULL;
            case "quick" -> QUICK;
            default -> throw new IllegalArgumentException("profile must be full or quick, but was " + name);
        };
    }

    Profile withThreads(List<Integer> threads) {
        return new Profile(name, forks, warmupIterations, warmupTime, measurementIterations, measurementTime, threads,
                postgresTableSizes);
    }

    /**
     * JMH options with this profile's forks, warm-up and measurement, failing the run on a benchmark's error (a broken
     * guard must stop the run, not leave a hole in the table); each run adds what it measures and its threads.
     */
    ChainedOptionsBuilder jmhOptions() {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .forks(forks)
                .warmupIterations(warmupIterations)
                .measurementIterations(measurementIterations)
                .measurementTime(TimeValue.milliseconds(measurementTime.toMillis()))
                .shouldFailOnError(true);
        if (warmupIterations > 0) {
            options.warmupTime(TimeValue.milliseconds(warmupTime.toMillis()));
        }
        return options;
    }

    String describe() {
        String warmup = warmupIterations == 0 ? "no warm-up"
                : "warm-up " + warmupIterations + " x " + seconds(warmupTime);
        return name + ": " + (forks == 0 ? "no fork (in the runner's JVM)" : forks + " fork per benchmark") + ", "
                + warmup + ", measurement " + measurementIterations + " x " + seconds(measurementTime) + ", threads "
                + threads.stream().map(String::valueOf).collect(Collectors.joining(", "))
                + ", PostgreSQL tables with " + tableSizes(postgresTableSizes) + " pre-filled rows";
    }

    /** "0 and 1,000,000" */
    static String tableSizes(List<Integer> sizes) {
        return sizes.stream().map(rows -> String.format(Locale.ROOT, "%,d", rows)).collect(Collectors.joining(" and "));
    }

    /** A rough time for {@code benchmarks} benchmarks: iterations plus JVM start and fixture set-up. */
    Duration estimate(int benchmarks) {
        Duration iterations = warmupTime.multipliedBy(warmupIterations)
                .plus(measurementTime.multipliedBy(measurementIterations));
        Duration each = forks == 0 ? iterations.plusMillis(700) : iterations.plusSeconds(3).multipliedBy(forks);
        return each.multipliedBy(benchmarks);
    }

    private static String seconds(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
    }
}
