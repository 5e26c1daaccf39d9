package dev.dedup;

/** The state of a live dedup record, as a duplicate claim reports it. */
public enum RecordState {
    /** Someone holds the key under a lease and has not completed yet. */
    IN_PROGRESS,
    /** The work for the key is done; the record is kept for its retention, with an optional result. */
    COMPLETED
}
