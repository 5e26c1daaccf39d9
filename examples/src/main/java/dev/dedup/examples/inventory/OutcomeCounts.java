package dev.dedup.examples.inventory;

import dev.dedup.ProcessingOutcome;

/** How many deliveries ended in each {@link ProcessingOutcome}. */
record OutcomeCounts(int processed, int alreadyProcessed, int inProgressElsewhere, int failed, int leaseLost) {
    static final OutcomeCounts NONE = new OutcomeCounts(0, 0, 0, 0, 0);

    /** These counts plus one {@code outcome}. */
    OutcomeCounts plus(ProcessingOutcome<?> outcome) {
        if (outcome instanceof ProcessingOutcome.Processed) {
            return new OutcomeCounts(processed + 1, alreadyProcessed, inProgressElsewhere, failed, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.AlreadyProcessed) {
            return new OutcomeCounts(processed, alreadyProcessed + 1, inProgressElsewhere, failed, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere) {
            return new OutcomeCounts(processed, alreadyProcessed, inProgressElsewhere + 1, failed, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.Failed || outcome instanceof ProcessingOutcome.AlreadyFailed) {
            return new OutcomeCounts(processed, alreadyProcessed, inProgressElsewhere, failed + 1, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.LeaseLost) {
            return new OutcomeCounts(processed, alreadyProcessed, inProgressElsewhere, failed, leaseLost + 1);
        }
        throw new IllegalArgumentException("unknown outcome " + outcome);
    }
}
