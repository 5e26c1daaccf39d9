package dev.dedup.jdbc;

import dev.dedup.RecordState;
import dev.dedup.Settlement;

/**
 * How a SQL store that resent a settlement after a lost reply tells whether the lost attempt settled it: the rerun
 * finds nothing to do, and the record its owner holds or held says what happened. Internal plumbing of dedup's SQL
 * stores.
 */
public final class LostReplies {
    private LostReplies() {}

    /**
     * {@return whether the lost attempt of {@code settlement} settled it: a complete or fail whose owner's record is
     * in the state asked for, or a release whose owner has no record left}
     *
     * @param settlement the settlement that was resent
     * @param stateOfOwner the state of the record if the settlement's owner holds or held it, else null
     */
    public static boolean settledBefore(Settlement settlement, String stateOfOwner) {
        if (settlement.kind() == Settlement.Kind.RELEASE) {
            return stateOfOwner == null;
        }
        return endedIn(settlement.endState(), stateOfOwner);
    }

    /**
     * {@return whether a complete or fail that was resent had ended the record in {@code outcome}}
     *
     * @param outcome the state the complete or fail asked for
     * @param stateOfOwner the state of the record if the claim's owner holds or held it, else null
     */
    public static boolean endedIn(RecordState outcome, String stateOfOwner) {
        return outcome.name().equals(stateOfOwner);
    }
}
