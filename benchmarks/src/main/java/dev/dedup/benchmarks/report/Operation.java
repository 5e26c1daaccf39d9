package dev.dedup.benchmarks.report;

/** The benchmarked operations, by benchmark method name, in the order the report shows them. */
public enum Operation {
    CLAIM_FRESH_KEY("claimFreshKey", "claim, fresh key", "ops/s"),
    CLAIM_LIVE_DUPLICATE("claimLiveDuplicate", "claim, live duplicate", "ops/s"),
    CLAIM_AND_COMPLETE("claimAndComplete", "claim + complete", "ops/s"),
    CLAIM_ALL_10("claimAll10", "claimAll, 10 keys", "keys/s"),
    CLAIM_ALL_100("claimAll100", "claimAll, 100 keys", "keys/s"),
    CLAIM_ALL_100_DUPLICATES("claimAll100Duplicates", "claimAll, 100 live duplicates", "keys/s");

    private final String method;
    private final String label;
    private final String unit;

    Operation(String method, String label, String unit) {
        this.method = method;
        this.label = label;
        this.unit = unit;
    }

    /** The benchmark method's name in StoreBenchmark and BaselineBenchmark. */
    public String method() {
        return method;
    }

    public String label() {
        return label;
    }

    /** ops/s, or keys/s for the batches (their benchmarks count each key as one operation). */
    public String unit() {
        return unit;
    }

    public static Operation ofMethod(String method) {
        for (Operation operation : values()) {
            if (operation.method.equals(method)) {
                return operation;
            }
        }
        throw new IllegalArgumentException("no operation for benchmark method " + method);
    }
}
