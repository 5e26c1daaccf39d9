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

    /**
     * A store / raw-baseline share that an operation of some stores should reach (issue 15): PostgreSQL duplicates
     * and batches, Redis batches, the MongoDB and DynamoDB duplicates; (issue 25) MariaDB's fresh claims and batches.
     */
    record RatioTarget(Set<String> stores, Operation operation, double share) {
        boolean appliesTo(Row row) {
            return row.baseline() != null && row.operation() == operation && stores.contains(row.store().store());
        }
    }

    static final List<RatioTarget> RATIOS = List.of(
            new RatioTarget(Set.of("postgres"), Operation.CLAIM_LIVE_DUPLICATE, 0.5),
            new RatioTarget(Set.of("postgres"), Operation.CLAIM_ALL_100, 0.5),
            new RatioTarget(Set.of("redis", "redis-cluster"), Operation.CLAIM_ALL_100, 0.8),
            new RatioTarget(Set.of("redis", "redis-cluster"), Operation.CLAIM_ALL_100_DUPLICATES, 0.8),
            new RatioTarget(Set.of("mongo", "dynamodb"), Operation.CLAIM_LIVE_DUPLICATE, 0.8),
            // issue 25: MySQL/MariaDB beside the driver's INSERT IGNORE
            new RatioTarget(Set.of("mariadb"), Operation.CLAIM_FRESH_KEY, 0.8),
            new RatioTarget(Set.of("mariadb"), Operation.CLAIM_ALL_100, 0.5));

    /** A row under a {@link RatioTarget} and whether it meets it. */
    record RatioCheck(Row row, RatioTarget target, boolean met) {}

    private Targets() {}

    static List<RatioCheck> ratios(List<Row> rows) {
        List<RatioCheck> checks = new ArrayList<>();
        for (RatioTarget target : RATIOS) {
            for (Row row : rows) {
                if (target.appliesTo(row)) {
                    checks.add(new RatioCheck(row, target, row.ratio() >= target.share()));
                }
            }
        }
        return checks;
    }

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
