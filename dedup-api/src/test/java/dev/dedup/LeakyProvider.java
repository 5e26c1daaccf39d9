package dev.dedup;

import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.util.Set;

/** A provider whose "driver" echoes the whole URI in its exceptions, registered only by one test's class loader. */
public final class LeakyProvider implements DedupStoreProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("leaky");
    }

    @Override
    public String artifact() {
        return "test:leaky";
    }

    @Override
    public UriParameters parameters() {
        return UriParameters.builder().choice("fail", "runtime", "runtime", "argument", "store").driver("apiToken")
                .build();
    }

    @Override
    public DedupStore open(StoreUri uri) {
        RuntimeException driver = new RuntimeException("cannot connect to " + uri.uri());
        throw switch (uri.choice("fail").orElseThrow()) {
            case "argument" -> new IllegalArgumentException("malformed " + uri.uri(), driver);
            case "store" -> DedupStoreException.retryable("leaky store", "open " + uri.redacted(), driver);
            default -> driver;
        };
    }
}
