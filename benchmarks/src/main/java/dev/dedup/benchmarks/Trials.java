package dev.dedup.benchmarks;

import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

/** What every trial shares: its own namespace, and the key the duplicate benchmarks claim again and again. */
final class Trials {
    /** Claimed once in each trial's set-up with a long lease; fresh keys start with "t", so never collide with it. */
    static final String DUPLICATE_KEY = "duplicate";

    /** The batch the duplicate claimAll benchmarks claim again and again, claimed once in each trial's set-up. */
    static final List<String> DUPLICATE_BATCH = IntStream.range(0, 100).mapToObj(i -> DUPLICATE_KEY + "-" + i)
            .toList();

    private Trials() {}

    /** A namespace no other trial or run uses: {@code bench-<12 random hex digits>}. */
    static String newNamespace() {
        byte[] random = new byte[6];
        ThreadLocalRandom.current().nextBytes(random);
        return "bench-" + HexFormat.of().formatHex(random);
    }

    /**
     * The guard of a fresh-key write: a key that was already there makes the number meaningless, so it fails the run.
     *
     * @return true, for the blackhole
     */
    static boolean requireFresh(boolean written, String key) {
        if (!written) {
            throw new IllegalStateException("the fresh key '" + key + "' was already there");
        }
        return true;
    }

    /**
     * The guard of a write on {@link #DUPLICATE_KEY}: it must have found the live key, not written it again.
     *
     * @return true, for the blackhole
     */
    static boolean requireDuplicate(boolean seen) {
        if (!seen) {
            throw new IllegalStateException("the live key '" + DUPLICATE_KEY + "' was written again");
        }
        return true;
    }
}
