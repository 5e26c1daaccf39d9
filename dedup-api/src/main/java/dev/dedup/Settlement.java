package dev.dedup;

import java.time.Duration;

/**
 * How one won claim ends, for {@link DedupStore#settleAll}: completed with a result, failed with an error, or
 * released. Immutable: the payload is copied when the settlement is made and when it is read. Arguments are
 * checked by the store at {@code settleAll}, with the checks of {@link DedupStore#complete}, {@link DedupStore#fail}
 * and {@link DedupStore#release}.
 */
public final class Settlement {

    /** What a settlement does to its claim. */
    public enum Kind {
        /** As {@link DedupStore#complete}: the record ends {@link RecordState#COMPLETED}. */
        COMPLETE,
        /** As {@link DedupStore#fail}: the record ends {@link RecordState#FAILED}. */
        FAIL,
        /** As {@link DedupStore#release}: the record is deleted so a redelivery can run at once. */
        RELEASE
    }

    private final Claim claim;
    private final Kind kind;
    private final Duration retention;
    private final byte[] payload;

    private Settlement(Claim claim, Kind kind, Duration retention, byte[] payload) {
        this.claim = claim;
        this.kind = kind;
        this.retention = retention;
        this.payload = payload == null ? null : payload.clone();
    }

    /**
     * {@return a settlement that completes {@code claim}, as {@link DedupStore#complete}}
     *
     * @param claim the claim this caller won
     * @param retention how long duplicates are recognised from the settle: 1 ms to 366 days
     * @param result the serialized result, at most {@link DedupLimits#MAX_RESULT_BYTES}, or null for none
     */
    public static Settlement complete(Claim claim, Duration retention, byte[] result) {
        return new Settlement(claim, Kind.COMPLETE, retention, result);
    }

    /**
     * {@return a settlement that fails {@code claim} for good, as {@link DedupStore#fail}}
     *
     * @param claim the claim this caller won
     * @param retention how long the failure is reported to duplicates from the settle: 1 ms to 366 days
     * @param error the serialized error, at most {@link DedupLimits#MAX_RESULT_BYTES}, or null for none
     */
    public static Settlement fail(Claim claim, Duration retention, byte[] error) {
        return new Settlement(claim, Kind.FAIL, retention, error);
    }

    /**
     * {@return a settlement that releases {@code claim}, as {@link DedupStore#release}}
     *
     * @param claim the claim this caller won
     */
    public static Settlement release(Claim claim) {
        return new Settlement(claim, Kind.RELEASE, null, null);
    }

    /** {@return the claim this settlement ends} */
    public Claim claim() {
        return claim;
    }

    /** {@return what the settlement does} */
    public Kind kind() {
        return kind;
    }

    /** {@return the retention of a complete or fail; null for a release} */
    public Duration retention() {
        return retention;
    }

    /** {@return a copy of the result or error; null for none and for a release} */
    public byte[] payload() {
        return payload == null ? null : payload.clone();
    }

    /** The payload itself, for the limit check, which must not copy 256 KiB to read a length. */
    byte[] payloadUncopied() {
        return payload;
    }

    /**
     * {@return the state the record ends in: {@link RecordState#COMPLETED} or {@link RecordState#FAILED}; null for a
     * release}
     */
    public RecordState endState() {
        return switch (kind) {
            case COMPLETE -> RecordState.COMPLETED;
            case FAIL -> RecordState.FAILED;
            case RELEASE -> null;
        };
    }

    @Override
    public String toString() {
        String key = claim == null ? "null" : "'" + claim.key() + "'";
        return "Settlement[" + kind + " " + key + (retention == null ? "" : " for " + retention)
                + (payload == null ? "" : ", " + payload.length + " bytes") + "]";
    }
}
