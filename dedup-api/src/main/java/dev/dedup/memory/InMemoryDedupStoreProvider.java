package dev.dedup.memory;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import java.util.Set;

/**
 * Opens {@code memory:} URIs, for example {@code memory:?namespace=orders}. Each call opens a new, empty store. The
 * only parameter is {@code namespace}.
 */
public final class InMemoryDedupStoreProvider implements DedupStoreProvider {

    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    @Override
    public String artifact() {
        return "dev.dedup:dedup-api";
    }

    @Override
    public DedupStore open(StoreUri uri) {
        if (!uri.location().isEmpty()) {
            // A host or path here means the URI was meant for another store; do not ignore it.
            throw new DedupConfigurationException("store URI " + uri.redacted() + " has a host or path, but memory:"
                    + " takes none; expected memory: or memory:?namespace=<name>");
        }
        return new InMemoryDedupStore(uri.namespace());
    }
}
