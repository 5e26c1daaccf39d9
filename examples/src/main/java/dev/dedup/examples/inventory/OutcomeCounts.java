package dev.dedup.examples.inventory;

import dev.dedup.ProcessingOutcome;

/**
 * How many deliveries ended in each {@link ProcessingOutcome}; a redelivered duplicate is told apart from a
 * redelivery after a crash by why the broker delivered it.
 */
record OutcomeCounts(int processed, int duplicatePublishesRecognised, int redeliveriesRecognised,
        int inProgressElsewhere, int failed, int leaseLost) {
    static final OutcomeCounts NONE = new OutcomeCounts(0, 0, 0, 0, 0, 0);

    /** Deliveries of a key completed before, whatever brought them. */
    int alreadyProcessed() {
        return duplicatePublishesRecognised + redeliveriesRecognised;
    }

    /** These counts plus one {@code outcome} of a delivery of {@code kind}. */
    OutcomeCounts plus(ProcessingOutcome<?> outcome, SimulatedBroker.Kind kind) {
        if (outcome instanceof ProcessingOutcome.Processed) {
            return new OutcomeCounts(processed + 1, duplicatePublishesRecognised, redeliveriesRecognised,
                    inProgressElsewhere, failed, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.AlreadyProcessed) {
            // A first delivery can find its key done too: when the duplicate copy overtook it.
            return kind == SimulatedBroker.Kind.REDELIVERY
                    ? new OutcomeCounts(processed, duplicatePublishesRecognised, redeliveriesRecognised + 1,
                            inProgressElsewhere, failed, leaseLost)
                    : new OutcomeCounts(processed, duplicatePublishesRecognised + 1, redeliveriesRecognised,
                            inProgressElsewhere, failed, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.InProgressElsewhere) {
            return new OutcomeCounts(processed, duplicatePublishesRecognised, redeliveriesRecognised,
                    inProgressElsewhere + 1, failed, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.Failed || outcome instanceof ProcessingOutcome.AlreadyFailed
                || outcome instanceof ProcessingOutcome.KeyReused) {
            return new OutcomeCounts(processed, duplicatePublishesRecognised, redeliveriesRecognised,
                    inProgressElsewhere, failed + 1, leaseLost);
        }
        if (outcome instanceof ProcessingOutcome.LeaseLost) {
            return new OutcomeCounts(processed, duplicatePublishesRecognised, redeliveriesRecognised,
                    inProgressElsewhere, failed, leaseLost + 1);
        }
        throw new IllegalArgumentException("unknown outcome " + outcome);
    }
}
