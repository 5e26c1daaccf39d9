package dev.dedup.tck;

import dev.dedup.DedupStore;
import dev.dedup.tck.MutantDedupStore.Mutation;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;

/**
 * The whole kit against a {@link MutantDedupStore}, broken as the configuration parameter {@value #MUTATION} says
 * ({@code NONE} when unset). {@link MutantKitTest} runs it once per mutation through the JUnit launcher; its name
 * keeps it out of surefire's own run, where the mutants would fail the build.
 */
@ExtendWith(KitOnMutantStore.ReadsMutation.class)
class KitOnMutantStore extends DedupStoreContractTest {
    static final String MUTATION = "dedup.tck.mutation";

    private Mutation mutation = Mutation.NONE;
    // One map per test, shared by every store the test opens: namespaces meet in it as they do on a server.
    private final ConcurrentMap<MutantDedupStore.Slot, MutantDedupStore.Entry> records = new ConcurrentHashMap<>();

    @Override
    protected DedupStore openStore(String namespace) {
        MutantDedupStore store = new MutantDedupStore(namespace, mutation, records);
        return switch (mutation) {
            case ASYNC_FINISH_BEFORE_WRITE -> BlockingOverAsync.of(store);
            case ASYNC_CANCEL_DROPPED -> BlockingOverAsync.of(new CancelDroppingView(store.async()), store);
            default -> store;
        };
    }

    @Override
    protected String storeUri(String namespace) {
        // Discovery opens the real in-memory store: the URI tests check the provider, not the mutation.
        return "memory:?namespace=" + namespace;
    }

    /** Sets the mutation before the fixture's {@code @BeforeEach} opens the first store. */
    static final class ReadsMutation implements TestInstancePostProcessor {
        @Override
        public void postProcessTestInstance(Object instance, ExtensionContext context) {
            ((KitOnMutantStore) instance).mutation =
                    context.getConfigurationParameter(MUTATION).map(Mutation::valueOf).orElse(Mutation.NONE);
        }
    }
}
