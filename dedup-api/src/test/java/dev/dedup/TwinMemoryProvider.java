package dev.dedup;

import dev.dedup.memory.InMemoryDedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import java.util.Set;

/** A second provider for {@code memory:}, registered only by one test's class loader, to provoke ambiguity. */
public final class TwinMemoryProvider implements DedupStoreProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    @Override
    public String artifact() {
        return "test:twin";
    }

    @Override
    public DedupStore open(StoreUri uri) {
        return new InMemoryDedupStore(uri.namespace());
    }
}
