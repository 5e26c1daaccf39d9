package dev.dedup.benchmarks;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/** What every trial shares: its own namespace, and the key the duplicate benchmarks claim again and again. */
final class Trials {
    /** Claimed once in each trial's set-up with a long lease; fresh keys start with "t", so never collide with it. */
    static final String DUPLICATE_KEY = "duplicate";

    private Trials() {}

    /** A namespace no other trial or run uses: {@code bench-<12 random hex digits>}. */
    static String newNamespace() {
        byte[] random = new byte[6];
        ThreadLocalRandom.current().nextBytes(random);
        return "bench-" + HexFormat.of().formatHex(random);
    }
}
