package dev.dedup.benchmarks;

import dev.dedup.benchmarks.fixture.BenchStore;
import java.util.List;
import java.util.Optional;
import org.openjdk.jmh.runner.options.Options;

/**
 * The async API's run: {@link AsyncDepthBenchmark}, one caller thread keeping {@link #DEPTH} claims in flight, the
 * store's {@code async().claim} beside the driver's own asynchronous write-if-absent, for each selected store whose
 * fixture has such a baseline.
 *
 * @param stores the selected stores with an asynchronous baseline, in report order
 */
record AsyncGroup(List<BenchStore> stores) implements JmhRun {
    /** The stores whose fixture has an asynchronous raw baseline, in report order. */
    static final List<BenchStore> STORES = List.of(BenchStore.REDIS, BenchStore.REDIS_CLUSTER);

    /** The in-flight window the async target is stated for. */
    static final int DEPTH = 64;

    /** The run for {@code stores}, or empty when none of them has an asynchronous baseline. */
    static Optional<AsyncGroup> plan(List<BenchStore> stores) {
        List<BenchStore> selected = STORES.stream().filter(stores::contains).toList();
        return selected.isEmpty() ? Optional.empty() : Optional.of(new AsyncGroup(selected));
    }

    @Override
    public int benchmarks() {
        return 2 * stores.size();
    }

    @Override
    public String describe() {
        return "async API / " + DEPTH + " claims in flight / 1 caller thread ("
                + String.join(", ", stores.stream().map(BenchStore::param).toList()) + "; store + raw async baseline)";
    }

    @Override
    public Options options(Profile profile) {
        return profile.jmhOptions()
                .include("^" + AsyncDepthBenchmark.class.getName().replace(".", "\\.") + "\\.")
                .param("store", stores.stream().map(BenchStore::param).toArray(String[]::new))
                .param("depth", String.valueOf(DEPTH))
                .threads(1)
                .build();
    }
}
