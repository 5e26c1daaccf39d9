package dev.dedup.benchmarks;

import dev.dedup.benchmarks.fixture.BenchStore;
import dev.dedup.benchmarks.report.Operation;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.Options;

/**
 * One JMH run: one operation of one store, the dedup store's benchmark and its raw baseline's back to back (so the
 * two halves of a ratio are measured minutes apart at most), at one thread count. The thread count is a JMH run
 * option, not a parameter, hence one run per count.
 */
record BenchGroup(BenchStore store, int threads, Operation operation, List<Integer> tableSizes) implements JmhRun {

    /** Every store in catalogue order; for each, every thread count of the profile; for each, every operation. */
    static List<BenchGroup> plan(Profile profile, List<BenchStore> stores) {
        List<BenchGroup> groups = new ArrayList<>();
        for (BenchStore store : stores) {
            List<Integer> sizes = store.prefillable() ? profile.postgresTableSizes() : List.of(0);
            for (int threads : profile.threads()) {
                for (Operation operation : Operation.values()) {
                    groups.add(new BenchGroup(store, threads, operation, sizes));
                }
            }
        }
        return groups;
    }

    @Override
    public int benchmarks() {
        return (store.hasBaseline() ? 2 : 1) * tableSizes.size();
    }

    @Override
    public String describe() {
        String sides = store.hasBaseline() ? "store + raw baseline" : "store only, the floor";
        String sizes = store.prefillable() ? ", tables with " + Profile.tableSizes(tableSizes) + " pre-filled rows"
                : "";
        return store.param() + " / " + operation.label() + " / " + threads + (threads == 1 ? " thread" : " threads")
                + " (" + sides + sizes + ")";
    }

    @Override
    public Options options(Profile profile) {
        ChainedOptionsBuilder options = profile.jmhOptions()
                .include(method(StoreBenchmark.class))
                .param("store", store.param())
                .param("prefilledRows", tableSizes.stream().map(String::valueOf).toArray(String[]::new))
                .threads(threads);
        if (store.hasBaseline()) {
            options.include(method(BaselineBenchmark.class));
        }
        return options.build();
    }

    /** JMH's include is a regular expression over {@code package.Class.method}. */
    private String method(Class<?> benchmark) {
        return "^" + benchmark.getName().replace(".", "\\.") + "\\." + operation.method() + "$";
    }
}
