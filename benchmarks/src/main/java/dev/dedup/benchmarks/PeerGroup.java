package dev.dedup.benchmarks;

import dev.dedup.benchmarks.fixture.BenchStore;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.runner.options.Options;

/**
 * The peer run: {@link PeerBenchmark}'s six benchmarks (dedup, raw and Spring Integration, fresh key and live
 * duplicate) at one thread count, on an empty table; one run per thread count of the profile, when PostgreSQL is
 * among the stores.
 *
 * @param threads the benchmark threads of this run
 */
record PeerGroup(int threads) implements JmhRun {
    private static final int BENCHMARKS = 6;

    /** One run per thread count of {@code profile}, or none without PostgreSQL. */
    static List<PeerGroup> plan(Profile profile, List<BenchStore> stores) {
        List<PeerGroup> groups = new ArrayList<>();
        if (stores.contains(BenchStore.POSTGRES)) {
            profile.threads().forEach(threads -> groups.add(new PeerGroup(threads)));
        }
        return groups;
    }

    @Override
    public int benchmarks() {
        return BENCHMARKS;
    }

    @Override
    public String describe() {
        return "postgres beside Spring Integration's JDBC metadata store / fresh key and live duplicate / " + threads
                + (threads == 1 ? " thread" : " threads") + " (dedup + raw + peer)";
    }

    @Override
    public Options options(Profile profile) {
        return profile.jmhOptions()
                .include("^" + PeerBenchmark.class.getName().replace(".", "\\.") + "\\.")
                .param("prefilledRows", "0")
                .threads(threads)
                .build();
    }
}
