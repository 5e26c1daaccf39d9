package dev.dedup;

import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.Redaction;
import dev.dedup.spi.Spelling;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Opens a {@link DedupStore} by URI through the {@link DedupStoreProvider}s on the class path:
 * {@code DedupStores.open("redis://cache:6379?namespace=orders")}.
 *
 * <p>Exactly one provider must claim the URI's scheme: none, or two, fails fast with the list of what was found,
 * because silently opening the wrong store would break the once-only guarantee. Building a store from a client the
 * application already has (for example {@code new InMemoryDedupStore(...)}) remains the primary path.
 */
public final class DedupStores {
    /** Where each scheme's provider lives, for the "add this" hint. */
    private static final Map<String, String> KNOWN_ARTIFACTS = Map.ofEntries(
            Map.entry("memory", "dev.dedup:dedup-api"),
            Map.entry("postgresql", "dev.dedup:dedup-store-postgres"),
            Map.entry("postgres", "dev.dedup:dedup-store-postgres"),
            Map.entry("jdbc:postgresql", "dev.dedup:dedup-store-postgres"),
            Map.entry("redis", "dev.dedup:dedup-store-redis"),
            Map.entry("rediss", "dev.dedup:dedup-store-redis"),
            Map.entry("redis-cluster", "dev.dedup:dedup-store-redis"),
            Map.entry("rediss-cluster", "dev.dedup:dedup-store-redis"),
            Map.entry("dynamodb", "dev.dedup:dedup-store-dynamodb"),
            Map.entry("mongodb", "dev.dedup:dedup-store-mongo"),
            Map.entry("mongodb+srv", "dev.dedup:dedup-store-mongo"));

    private DedupStores() {}

    /**
     * Opens the store for {@code uri}, for example {@code memory:} or {@code redis://host:6379?namespace=orders}.
     *
     * @param uri the store URI; its scheme picks the provider, its query parameters configure the store
     * @return the open store, owned by the caller, who closes it
     * @throws DedupConfigurationException if the URI cannot work (see {@link #open(String, Map)})
     * @throws DedupStoreException if the backend could not be reached
     */
    public static DedupStore open(String uri) {
        return open(uri, Map.of());
    }

    /**
     * Opens the store for {@code uri}; {@code properties} override the URI's query parameters. Every parameter is
     * checked against the provider's {@link DedupStoreProvider#parameters()} first; any failure is a
     * {@link DedupConfigurationException} (the URI cannot work) or a {@link DedupStoreException} (the backend could
     * not be reached), and no message in it or its causes holds a credential of the URI.
     *
     * @param uri the store URI; its scheme picks the provider
     * @param properties query parameters by name, taking precedence over the URI's; empty for none. Useful for a
     *     password kept out of the URI
     * @return the open store, owned by the caller, who closes it
     * @throws DedupConfigurationException if no provider or several claim the scheme, or a parameter is unknown or
     *     out of bounds
     * @throws DedupStoreException if the backend could not be reached
     */
    public static DedupStore open(String uri, Map<String, String> properties) {
        StoreUri storeUri = StoreUri.parse(uri, properties);
        DedupStoreProvider provider = providerOf(storeUri);
        StoreUri checked = storeUri.check(provider.parameters());
        try {
            return provider.open(checked);
        } catch (RuntimeException e) {
            throw Redaction.scrub(asDedupException(e, checked), checked.secrets());
        }
    }

    /**
     * The query parameters the store of a URI accepts, without opening it: a framework that maps its own settings
     * onto URI parameters (a Spring Boot property) hands over only those the store takes.
     *
     * @param uri the store URI; its scheme picks the provider
     * @return the provider's parameters
     * @throws DedupConfigurationException if the URI is malformed, or no provider or several claim its scheme
     */
    public static UriParameters parameters(String uri) {
        return providerOf(StoreUri.parse(uri, Map.of())).parameters();
    }

    private static DedupStoreProvider providerOf(StoreUri storeUri) {
        Discovery discovery = discover();
        List<DedupStoreProvider> matching = new ArrayList<>();
        for (DedupStoreProvider provider : discovery.providers) {
            if (provider.schemes().contains(storeUri.scheme())) {
                matching.add(provider);
            }
        }
        if (matching.isEmpty()) {
            throw new DedupConfigurationException("no DedupStoreProvider for scheme '" + storeUri.scheme() + "' in "
                    + storeUri.redacted() + "." + typoHint(storeUri.scheme(), discovery)
                    + " Found: " + describe(discovery.providers) + broken(discovery) + ". Add "
                    + KNOWN_ARTIFACTS.getOrDefault(storeUri.scheme(), "the store module for this scheme")
                    + " to the class path");
        }
        if (matching.size() > 1) {
            throw new DedupConfigurationException("several DedupStoreProviders for scheme '" + storeUri.scheme()
                    + "': " + describe(matching) + "; keep exactly one of them on the class path");
        }
        return matching.get(0);
    }

    /** A provider should throw only dedup's exceptions; this maps what a driver let through. */
    private static RuntimeException asDedupException(RuntimeException e, StoreUri uri) {
        if (e instanceof DedupException) {
            return e;
        }
        if (e instanceof IllegalArgumentException) {
            // Clients reject malformed settings with IllegalArgumentException: the URI cannot work as written.
            return new DedupConfigurationException("store URI " + uri.redacted() + " is not valid: " + e.getMessage(),
                    e);
        }
        return new DedupStoreException("open " + uri.redacted() + " failed: " + e, e, true);
    }

    /** "Did you mean postgresql?" for a scheme that is nobody's, nothing for a known one whose module is missing. */
    private static String typoHint(String scheme, Discovery discovery) {
        return KNOWN_ARTIFACTS.containsKey(scheme) ? "" : Spelling.didYouMean(scheme, knownSchemes(discovery));
    }

    /** The schemes a URI may have: those of the providers found and those of dedup's own store modules. */
    private static Set<String> knownSchemes(Discovery discovery) {
        Set<String> schemes = new TreeSet<>(KNOWN_ARTIFACTS.keySet());
        discovery.providers.forEach(provider -> schemes.addAll(provider.schemes()));
        return schemes;
    }

    /**
     * Lists the providers found on the class path; for diagnostics.
     *
     * @return the providers' class names by scheme, schemes in alphabetical order; a scheme with two names cannot be
     *     opened
     */
    public static Map<String, List<String>> providers() {
        Map<String, List<String>> byScheme = new TreeMap<>();
        for (DedupStoreProvider provider : discover().providers) {
            for (String scheme : provider.schemes()) {
                byScheme.computeIfAbsent(scheme, s -> new ArrayList<>()).add(provider.getClass().getName());
            }
        }
        return byScheme;
    }

    private record Discovery(List<DedupStoreProvider> providers, List<String> failures) {}

    private static Discovery discover() {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        Map<String, DedupStoreProvider> byClass = new LinkedHashMap<>();
        List<String> failures = new ArrayList<>();
        load(loader == null ? DedupStores.class.getClassLoader() : loader, byClass, failures);
        // In a container the context loader may not see our own module; look there too.
        load(DedupStores.class.getClassLoader(), byClass, failures);
        return new Discovery(List.copyOf(byClass.values()), failures);
    }

    private static void load(ClassLoader loader, Map<String, DedupStoreProvider> byClass, List<String> failures) {
        Iterator<DedupStoreProvider> iterator = ServiceLoader.load(DedupStoreProvider.class, loader).iterator();
        while (true) {
            try {
                if (!iterator.hasNext()) {
                    return;
                }
                DedupStoreProvider provider = iterator.next();
                byClass.putIfAbsent(provider.getClass().getName(), provider);
            } catch (ServiceConfigurationError e) {
                // One broken jar must not hide the others: report it with the rest.
                failures.add(e.getMessage());
            }
        }
    }

    private static String describe(List<DedupStoreProvider> providers) {
        if (providers.isEmpty()) {
            return "none";
        }
        List<String> described = new ArrayList<>();
        for (DedupStoreProvider provider : providers) {
            described.add(provider.schemes() + " by " + provider.getClass().getName() + " (" + provider.artifact()
                    + ")");
        }
        return String.join(", ", described);
    }

    private static String broken(Discovery discovery) {
        return discovery.failures.isEmpty() ? "" : "; providers that failed to load: " + discovery.failures;
    }
}
