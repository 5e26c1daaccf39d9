package dev.dedup.benchmarks;

import org.openjdk.jmh.runner.options.Options;

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
        return profile.jmhOptions()
                .include("^" + OutboxBenchmark.class.getName().replace(".", "\\.") + "\\.")
                .threads(1)
                .build();
    }
}
