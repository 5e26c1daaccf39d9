package dev.dedup.spi;

import dev.dedup.DedupStore;

/**
 * Opens stores of one kind by URI; found with {@link java.util.ServiceLoader}. Register an implementation in
 * {@code META-INF/services/dev.dedup.spi.DedupStoreProvider} and with {@code provides} in {@code module-info}.
 * The constructor must be public, take no arguments and do nothing slow: every provider on the class path is
 * instantiated whenever a store is opened by URI.
 */
public interface DedupStoreProvider {

    /** {@return the URI schemes this provider opens, lower case, for example {@code redis} and {@code rediss}} */
    java.util.Set<String> schemes();

    /**
     * {@return what a user adds to get this provider, for messages: for example {@code dev.dedup:dedup-store-redis}}
     */
    String artifact();

    /**
     * The query parameters this provider accepts: its own (typed, with defaults and bounds) and the driver's it passes
     * through. {@link dev.dedup.DedupStores#open(String)} refuses any other name and any value out of bounds before
     * calling {@link #open}, naming the nearest allowed name, so a typo cannot silently fall back to a default (a
     * misspelt {@code namespace} would put two services in one namespace). The default declares only
     * {@code namespace}.
     *
     * @return the declared parameters; called on every open, so build them once and keep them
     */
    default UriParameters parameters() {
        return UriParameters.builder().build();
    }

    /**
     * Opens a store for {@code uri}, already {@linkplain StoreUri#check checked} against {@link #parameters()}: read
     * values through its typed getters and map them to the client. Throws
     * {@link dev.dedup.DedupConfigurationException} for a URI it cannot use, naming the bad part and what is allowed,
     * and never puts a credential in a message (use {@link StoreUri#redacted()}; {@code DedupStores.open} also
     * scrubs whatever a driver's exception echoes).
     *
     * @param uri the parsed and checked URI, with any properties passed to {@code open} already applied
     * @return the open store, which owns the clients it created and closes them in {@link DedupStore#close()}
     */
    DedupStore open(StoreUri uri);
}
