package dev.dedup.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.Claim;
import dev.dedup.DedupStore;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The reactive-streams driver is an optional dependency: with its classes hidden, the store's classes load, a store
 * opened by URI works, and {@code async()} throws {@link UnsupportedOperationException} as before.
 */
class MongoWithoutReactiveDriverOnMongoJavaServerTest {

    @Test
    @DisplayName("without the reactive-streams driver on the class path, the blocking store opens and works as before")
    void blockingStoreNeedsNoReactiveDriver() throws Exception {
        try (MongoTestServer server = MongoTestServer.startInProcess()) {
            ClassLoader hiding = new WithoutReactiveDriver(getClass().getClassLoader());
            DedupStoreProvider provider = (DedupStoreProvider) hiding
                    .loadClass(MongoDedupStoreProvider.class.getName()).getConstructor().newInstance();
            assertThat(provider.getClass().getClassLoader()).isSameAs(hiding);

            StoreUri uri = StoreUri.parse(server.url() + "/?database=dedup_plain&createIndexes=true", Map.of())
                    .check(provider.parameters());
            try (DedupStore store = provider.open(uri)) {
                assertThat(store.claim("k", Duration.ofMinutes(1))).isInstanceOf(Claim.class);
                assertThatThrownBy(store::async).isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining("AsyncDedupStore.onExecutor");
            }
        }
    }

    /** Loads the store's own classes itself, so their links resolve here, where the reactive driver is absent. */
    private static final class WithoutReactiveDriver extends ClassLoader {
        private static final String STORE = MongoDedupStore.class.getPackageName() + ".";

        WithoutReactiveDriver(ClassLoader parent) {
            super(parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (name.startsWith("com.mongodb.reactivestreams.") || name.startsWith("org.reactivestreams.")
                        || name.startsWith("reactor.")) {
                    throw new ClassNotFoundException(name + " (hidden by the test)");
                }
                if (!name.startsWith(STORE)) {
                    return super.loadClass(name, resolve);
                }
                Class<?> loaded = findLoadedClass(name);
                if (loaded == null) {
                    loaded = define(name);
                }
                if (resolve) {
                    resolveClass(loaded);
                }
                return loaded;
            }
        }

        private Class<?> define(String name) throws ClassNotFoundException {
            try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                if (in == null) {
                    throw new ClassNotFoundException(name);
                }
                byte[] bytes = in.readAllBytes();
                return defineClass(name, bytes, 0, bytes.length);
            } catch (IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }
    }
}
