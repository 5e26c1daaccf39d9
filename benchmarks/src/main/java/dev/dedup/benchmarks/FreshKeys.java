package dev.dedup.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Keys never used before, one sequence per benchmark thread: {@code t<thread>-<random>-<counter>}. Together with the
 * trial's own namespace, no two threads, trials or runs against the shared servers ever produce the same key.
 */
@State(Scope.Thread)
public class FreshKeys {
    private String prefix;
    private long counter;

    @Setup(Level.Trial)
    public void start(ThreadParams thread) {
        prefix = "t" + thread.getThreadIndex() + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong()) + "-";
        counter = 0;
    }

    public String next() {
        return prefix + counter++;
    }

    public List<String> next(int count) {
        List<String> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(next());
        }
        return keys;
    }
}
