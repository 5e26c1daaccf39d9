package dev.dedup.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The targets, checked against a run and reported (never asserted: the machines are noisy). */
final class Targets {
    /** A store's fresh-key claim should reach this share of its raw baseline at the same thread count. */
    static final double FRESH_CLAIM_RATIO = 0.90;

    /** claimAll of 100 keys should reach this multiple of the single-claim keys/s ... */
    static final double BATCH_SPEED_UP = 10;

    /** ... on these stores. */
    static final Set<String> BATCH_STORES = Set.of("postgres", "redis", "redis-cluster");

    private Targets() {}

    /** A fresh-key claim row and whether its ratio to the baseline meets {@link #FRESH_CLAIM_RATIO}. */
    record FreshClaim(Row row, boolean met) {}

    /** claimAll100 against claimFreshKey of the same store, table size and threads. */
    record BatchSpeedUp(Row batch, Row single, double speedUp, boolean met) {}

    static List<FreshClaim> freshClaims(List<Row> rows) {
        List<FreshClaim> checks = new ArrayList<>();
        for (Row row : rows) {
            if (row.operation() == Operation.CLAIM_FRESH_KEY && row.baseline() != null) {
                checks.add(new FreshClaim(row, row.ratio() >= FRESH_CLAIM_RATIO));
            }
        }
        return checks;
    }

    static List<BatchSpeedUp> batchSpeedUps(List<Row> rows) {
        List<BatchSpeedUp> checks = new ArrayList<>();
        for (Row batch : rows) {
            if (batch.operation() != Operation.CLAIM_ALL_100 || !BATCH_STORES.contains(batch.store().store())) {
                continue;
            }
            for (Row single : rows) {
                if (single.operation() == Operation.CLAIM_FRESH_KEY && single.storeLabel().equals(batch.storeLabel())
                        && single.threads() == batch.threads()) {
                    double speedUp = batch.store().score() / single.store().score();
                    checks.add(new BatchSpeedUp(batch, single, speedUp, speedUp >= BATCH_SPEED_UP));
                }
            }
        }
        return checks;
    }
}
