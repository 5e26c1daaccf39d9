package dev.dedup.examples.inventory;

/** What to run: the store to deduplicate in, and the seed and size of the message stream. */
record DemoConfig(String storeUri, long seed, int messages, int skus, int consumers, SimulatedBroker.Faults faults) {
    static final String DEFAULT_STORE = "memory:";
    static final long DEFAULT_SEED = 42;
    static final int DEFAULT_MESSAGES = 2_000;
    static final int DEFAULT_SKUS = 20;
    static final int DEFAULT_CONSUMERS = 4;

    static final String USAGE = "usage: InventoryDemo [store-uri] [--seed=N] [--messages=N] [--consumers=N]"
            + "  (default store: memory:, 4 consumer threads)";

    DemoConfig {
        if (messages < 1 || skus < 1 || consumers < 1 || consumers > 64) {
            throw new IllegalArgumentException("messages and skus must be positive, consumers in [1, 64]; " + USAGE);
        }
    }

    static DemoConfig defaults(String storeUri) {
        return new DemoConfig(storeUri, DEFAULT_SEED, DEFAULT_MESSAGES, DEFAULT_SKUS, DEFAULT_CONSUMERS,
                SimulatedBroker.Faults.DEFAULT);
    }

    /** Parses {@code [store-uri] [--seed=N] [--messages=N] [--consumers=N]}; a blank URI (an unset Maven property) means memory:. */
    static DemoConfig fromArgs(String... args) {
        String storeUri = DEFAULT_STORE;
        long seed = DEFAULT_SEED;
        int messages = DEFAULT_MESSAGES;
        int consumers = DEFAULT_CONSUMERS;
        for (String arg : args) {
            try {
                if (arg.startsWith("--seed=")) {
                    seed = Long.parseLong(arg.substring("--seed=".length()));
                } else if (arg.startsWith("--messages=")) {
                    messages = Integer.parseInt(arg.substring("--messages=".length()));
                } else if (arg.startsWith("--consumers=")) {
                    consumers = Integer.parseInt(arg.substring("--consumers=".length()));
                } else if (arg.startsWith("--")) {
                    throw new IllegalArgumentException("unknown option " + arg + "; " + USAGE);
                } else if (!arg.isBlank()) {
                    storeUri = arg;
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a number in " + arg + "; " + USAGE, e);
            }
        }
        return new DemoConfig(storeUri, seed, messages, DEFAULT_SKUS, consumers, SimulatedBroker.Faults.DEFAULT);
    }
}
