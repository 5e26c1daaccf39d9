package dev.dedup.benchmarks;

import dev.dedup.benchmarks.fixture.BenchStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.openjdk.jmh.runner.options.Options;

/**
 * The Kafka adapter's run: {@link KafkaBenchmark}'s loops, the no-dedup reference first, then for each selected store
 * that the adapter's targets name (Redis, PostgreSQL) the batch mode, the inbox (PostgreSQL), the per-record mode
 * and the one-claim-per-record loop. Always one
 * thread: a KafkaConsumer is single-threaded, and one partition is read.
 *
 * @param loops the values of the benchmark's {@code loop} parameter, in run order
 */
record KafkaGroup(List<String> loops) implements JmhRun {
    /** The stores the Kafka targets name, in report order. */
    static final List<BenchStore> STORES = List.of(BenchStore.REDIS, BenchStore.POSTGRES);

    /** The run for {@code stores}, or empty when none of them is Redis or PostgreSQL. */
    static Optional<KafkaGroup> plan(List<BenchStore> stores) {
        List<String> loops = new ArrayList<>();
        for (BenchStore store : STORES) {
            if (stores.contains(store)) {
                loops.add("batch-" + store.param());
                if (store == BenchStore.POSTGRES) {
                    loops.add("inbox-postgres");
                }
                loops.add("adapter-" + store.param());
                loops.add("per-record-" + store.param());
            }
        }
        if (loops.isEmpty()) {
            return Optional.empty();
        }
        loops.add(0, "no-dedup");
        return Optional.of(new KafkaGroup(List.copyOf(loops)));
    }

    @Override
    public int benchmarks() {
        return loops.size();
    }

    @Override
    public String describe() {
        return "kafka adapter / poll of up to " + KafkaBenchmark.MAX_POLL_RECORDS + " records / 1 thread ("
                + String.join(", ", loops) + ")";
    }

    @Override
    public Options options(Profile profile) {
        return profile.jmhOptions()
                .include("^" + KafkaBenchmark.class.getName().replace(".", "\\.") + "\\.poll$")
                .param("loop", loops.toArray(String[]::new))
                .threads(1)
                .build();
    }
}
