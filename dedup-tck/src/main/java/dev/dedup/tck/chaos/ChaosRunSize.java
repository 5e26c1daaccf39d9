package dev.dedup.tck.chaos;

/**
 * How many messages a broker's chaos run publishes, the same for every broker. The test command runs 3,000 per store
 * run (2,000 in the outage runs and the control), enough for a dozen kills or more in each; the documented figures
 * come from longer runs, set with {@code -Ddedup.chaos.messages=10000} (then 3,000 in the outage runs and the
 * control).
 */
public final class ChaosRunSize {
    private ChaosRunSize() {
    }

    /** {@return the messages of a store's run: {@code dedup.chaos.messages}, 3,000 by default} */
    public static int messages() {
        return Integer.getInteger("dedup.chaos.messages", 3_000);
    }

    /**
     * {@return the messages of the outage runs and the naive control: {@code dedup.chaos.shortRunMessages}, else
     * 3,000 in a long run ({@code dedup.chaos.messages} set) and 2,000 in the test command} What those show is the 5 s
     * without the store, and that a naive consumer doubles, not the kills' limit.
     */
    public static int shortRunMessages() {
        int byDefault = Integer.getInteger("dedup.chaos.messages") != null ? 3_000 : 2_000;
        return Integer.getInteger("dedup.chaos.shortRunMessages", byDefault);
    }
}
