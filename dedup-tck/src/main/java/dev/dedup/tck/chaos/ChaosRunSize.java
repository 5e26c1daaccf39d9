package dev.dedup.tck.chaos;

/**
 * How many messages a broker's chaos run publishes, the same for every broker. The test command runs 5,000 per store
 * run, enough for dozens of kills in each phase; the documented figures come from longer runs, set with {@code
 * -Ddedup.chaos.messages=10000}.
 */
public final class ChaosRunSize {
    private ChaosRunSize() {
    }

    /** {@return the messages of a store's run: {@code dedup.chaos.messages}, 5,000 by default} */
    public static int messages() {
        return Integer.getInteger("dedup.chaos.messages", 5_000);
    }

    /**
     * {@return the messages of the outage runs and the naive control: {@code dedup.chaos.shortRunMessages}, 3,000 by
     * default} What those show is the 5 s without the store, and that a naive consumer doubles, not the kills' limit.
     */
    public static int shortRunMessages() {
        return Integer.getInteger("dedup.chaos.shortRunMessages", 3_000);
    }
}
