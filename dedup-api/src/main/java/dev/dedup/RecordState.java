package dev.dedup;

/** The state of a live dedup record, as a duplicate claim reports it. */
public enum RecordState {
    /** Someone holds the key under a lease and has not completed yet. */
    IN_PROGRESS,
    /** The work for the key is done; the record is kept for its retention, with an optional result. */
    COMPLETED,
    /**
     * The work for the key failed for good (a failure retrying cannot fix); the record is kept for its retention,
     * with an optional error payload, so a redelivery or a retried request gets the same failure back.
     */
    FAILED;

    /** {@return true for the states a record ends in: {@link #COMPLETED} and {@link #FAILED}} */
    public boolean isTerminal() {
        return this != IN_PROGRESS;
    }
}
