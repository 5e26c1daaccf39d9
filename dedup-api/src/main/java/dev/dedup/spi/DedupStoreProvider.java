package dev.dedup.spi;

/**
 * Opens stores of one kind by URI; found with {@link java.util.ServiceLoader}. Register an implementation in
 * {@code META-INF/services/dev.dedup.spi.DedupStoreProvider} and with {@code provides} in {@code module-info}.
 * The constructor must be public, take no arguments and do nothing slow: every provider on the class path is
 * instantiated whenever a store is opened by URI.
 */
public interface DedupStoreProvider {

    /** The URI schemes this provider opens, lower case, for example {@code redis} and {@code rediss}. */
    java.util.Set<String> schemes();

    /** What a user adds to get this provider, for messages: for example {@code dev.dedup:dedup-store-redis}. */
    String artifact();

    /**
     * Opens a store for {@code uri}. Throws {@link dev.dedup.DedupConfigurationException} for a URI it cannot use,
     * naming the bad part and what is allowed.
     */
    DedupStore open(StoreUri uri);
}
