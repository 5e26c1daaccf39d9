package dev.dedup.benchmarks;

import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The transactional outbox's run: {@link OutboxBenchmark}'s seven benchmarks on PostgreSQL, Kafka and RabbitMQ, one
 * thread (the targets are for one writer and one relay). Each benchmark sets its own mode.
 */
record OutboxGroup() implements JmhRun {
    @Override
    public int benchmarks() {
        return 7;
    }

    @Override
    public String describe() {
        return "transactional outbox / PostgreSQL + Kafka + RabbitMQ / 1 thread (append in a transaction, relay vs"
                + " the broker's own publisher at batch " + OutboxBenchmark.BATCH + ", commit-to-consumer latency)";
    }

    @Override
    public Options options(Profile profile) {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include("^" + OutboxBenchmark.class.getName().replace(".", "\\.") + "\\.")
                .threads(1)
                .forks(profile.forks())
                .warmupIterations(profile.warmupIterations())
                .measurementIterations(profile.measurementIterations())
                .measurementTime(TimeValue.milliseconds(profile.measurementTime().toMillis()))
                .shouldFailOnError(true);
        if (profile.warmupIterations() > 0) {
            options.warmupTime(TimeValue.milliseconds(profile.warmupTime().toMillis()));
        }
        return options.build();
    }
}
