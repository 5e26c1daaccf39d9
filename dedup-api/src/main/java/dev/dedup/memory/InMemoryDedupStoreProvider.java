package dev.dedup.memory;

import dev.dedup.spi.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import java.util.Set;

/** Opens {@code memory:} URIs, for example {@code memory:?namespace=orders}. Each call opens a new, empty store. */
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
        uri.requireOnly(Set.of("namespace"));
        return new InMemoryDedupStore(uri.namespace());
    }
}
