package dev.dedup.benchmarks;

import org.openjdk.jmh.runner.options.Options;

/** One JMH run of the plan: a store group ({@link BenchGroup}) or the Kafka adapter's loops ({@link KafkaGroup}). */
interface JmhRun {
    /** One line for the progress output. */
    String describe();

    /** How many benchmarks (parameter combinations) the run measures, for the time estimate. */
    int benchmarks();

    /** The JMH options of the run under {@code profile}. */
    Options options(Profile profile);
}
