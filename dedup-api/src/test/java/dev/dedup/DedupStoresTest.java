package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.dedup.memory.InMemoryDedupStore;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DedupStoresTest {

    @Test
    @DisplayName("memory: opens an in-memory store in the default namespace")
    void opensMemory() {
        try (DedupStore store = DedupStores.open("memory:")) {
            assertThat(store).isInstanceOf(InMemoryDedupStore.class);
            assertThat(store.namespace()).isEqualTo("default");
            assertThat(store.claim("k", Duration.ofSeconds(1)).isClaimed()).isTrue();
        }
    }

    @Test
    @DisplayName("the namespace comes from the URI, and properties override it")
    void namespaceFromUriAndProperties() {
        try (DedupStore fromUri = DedupStores.open("MEMORY:?namespace=orders");
                DedupStore fromProperties = DedupStores.open("memory:?namespace=orders", Map.of("namespace", "pay"))) {
            assertThat(fromUri.namespace()).isEqualTo("orders");
            assertThat(fromProperties.namespace()).isEqualTo("pay");
        }
    }

    @Test
    @DisplayName("an unknown scheme names the scheme, what was found and what to add, without the password")
    void unknownSchemeIsExplained() {
        assertThatThrownBy(() -> DedupStores.open("redis://app:s3cret@cache:6379"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("no DedupStoreProvider for scheme 'redis'")
                .hasMessageContaining("[memory] by dev.dedup.memory.InMemoryDedupStoreProvider")
                .hasMessageContaining("Add dev.dedup:dedup-store-redis")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    @DisplayName("two providers for one scheme fail fast and name both")
    void ambiguousSchemeFailsFast(@TempDir Path dir) throws Exception {
        Path services = dir.resolve("META-INF/services/dev.dedup.spi.DedupStoreProvider");
        Files.createDirectories(services.getParent());
        Files.writeString(services, TwinMemoryProvider.class.getName() + "\n");
        ClassLoader original = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader twin = new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
            Thread.currentThread().setContextClassLoader(twin);

            assertThatThrownBy(() -> DedupStores.open("memory:"))
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("several DedupStoreProviders for scheme 'memory'")
                    .hasMessageContaining(TwinMemoryProvider.class.getName())
                    .hasMessageContaining("InMemoryDedupStoreProvider");
            assertThat(DedupStores.providers().get("memory")).hasSize(2);
        } finally {
            Thread.currentThread().setContextClassLoader(original);
        }
    }

    @Test
    @DisplayName("bad URIs, bad namespaces and unknown parameters are configuration errors that say what is allowed")
    void badUrisAreExplained() {
        assertThatThrownBy(() -> DedupStores.open(null)).isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("must not be null");
        assertThatThrownBy(() -> DedupStores.open("no-scheme-here")).isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("no valid scheme");
        assertThatThrownBy(() -> DedupStores.open("memory:?namespace=a:b"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("'a:b'")
                .hasMessageContaining("A-Z a-z 0-9");
        assertThatThrownBy(() -> DedupStores.open("memory:?namspace=typo"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namspace'")
                .hasMessageContaining("[namespace]")
                .hasMessageContaining("Did you mean namespace?");
    }

    @Test
    @DisplayName("a misspelt scheme names the nearest known schemes; a known scheme without its module does not")
    void misspeltSchemesSuggestTheNearest() {
        assertThatThrownBy(() -> DedupStores.open("memroy:?namespace=x"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("no DedupStoreProvider for scheme 'memroy'")
                .hasMessageContaining("Did you mean memory?");
        assertThatThrownBy(() -> DedupStores.open("postgress://app:s3cret@db/app"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("Did you mean postgres or postgresql?")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> DedupStores.open("jdbc:postgresq://db/app"))
                .hasMessageContaining("Did you mean jdbc:postgresql?");
        assertThatThrownBy(() -> DedupStores.open("redis://cache:6379"))
                .hasMessageNotContaining("Did you mean").hasMessageContaining("Add dev.dedup:dedup-store-redis");
    }

    @Test
    @DisplayName("a misspelt namespace on memory: is refused with the nearest name, not opened in 'default'")
    void misspeltNamespaceIsRefused() {
        assertThatThrownBy(() -> DedupStores.open("memory:?namepsace=orders"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namepsace'")
                .hasMessageContaining("Did you mean namespace?");
        assertThatThrownBy(() -> DedupStores.open("memory:", Map.of("Namespace", "orders")))
                .hasMessageContaining("Did you mean namespace?");
    }

    @Test
    @DisplayName("memory: with a host is refused, the user-info and secret parameters masked")
    void memoryRefusesAHost() {
        assertThatThrownBy(() -> DedupStores.open("memory://s3cret@host?namespace=x"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("memory://***@host")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> DedupStores.open("memory:?namespace=x&password=s3cret"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("password=***")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    @DisplayName("whatever a provider's driver throws while opening becomes a dedup exception with no secret in it")
    void providerFailuresAreMappedAndScrubbed(@TempDir Path dir) throws Exception {
        Path services = dir.resolve("META-INF/services/dev.dedup.spi.DedupStoreProvider");
        Files.createDirectories(services.getParent());
        Files.writeString(services, LeakyProvider.class.getName() + "\n");
        ClassLoader original = Thread.currentThread().getContextClassLoader();
        try (URLClassLoader leaky = new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
            Thread.currentThread().setContextClassLoader(leaky);
            String uri = "leaky://app:pw%2Bs3cret@127.0.0.1:1?apiToken=t0ken-s3cret&fail=";

            Throwable runtime = catchThrowable(() -> DedupStores.open(uri + "runtime"));
            assertThat(runtime).isInstanceOf(DedupStoreException.class)
                    .hasMessageContaining("open leaky://***@127.0.0.1:1?apiToken=***&fail=runtime failed");
            assertThat(((DedupStoreException) runtime).isRetryable()).isTrue();
            assertNoSecret(runtime);

            Throwable argument = catchThrowable(() -> DedupStores.open(uri + "argument"));
            assertThat(argument).isInstanceOf(DedupConfigurationException.class).hasMessageContaining("is not valid");
            assertNoSecret(argument);

            Throwable store = catchThrowable(() -> DedupStores.open(uri + "store"));
            assertThat(store).isInstanceOf(DedupStoreException.class);
            assertThat(store.getCause()).hasMessageContaining("RuntimeException: cannot connect to leaky://");
            assertNoSecret(store);
        } finally {
            Thread.currentThread().setContextClassLoader(original);
        }
    }

    private static void assertNoSecret(Throwable failure) {
        for (Throwable each = failure; each != null; each = each.getCause()) {
            assertThat(each.getMessage()).doesNotContain("s3cret").doesNotContain("pw+").doesNotContain("pw%2B");
        }
    }

    @Test
    @DisplayName("providers() lists the memory provider")
    void listsProviders() {
        assertThat(DedupStores.providers()).containsEntry("memory",
                List.of("dev.dedup.memory.InMemoryDedupStoreProvider"));
    }
}
