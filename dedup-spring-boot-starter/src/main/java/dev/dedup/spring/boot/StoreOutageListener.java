package dev.dedup.spring.boot;

/**
 * Told of every protected request that met an unreachable store: to count outages. The filter logs each one
 * itself (method, path and the store's message, which never holds credentials), whatever the listener does. Also
 * told of the requests without a key that ran unprotected ({@code dedup.http.key-required=false}): the other way a
 * protected path runs without deduplication.
 */
@FunctionalInterface
public interface StoreOutageListener {

    /**
     * Called once per protected request whose key could not be claimed because the store failed.
     *
     * @param passedThrough true when the request ran without deduplication ({@code dedup.http.fail-open=true}),
     *     false when it was answered 503
     * @param failure what the store threw
     */
    void storeUnavailable(boolean passedThrough, Throwable failure);

    /** Called once per protected request that came without a key and ran unprotected, as configured. */
    default void ranWithoutKey() {}
}
