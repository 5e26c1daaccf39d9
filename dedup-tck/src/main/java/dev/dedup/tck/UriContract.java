package dev.dedup.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStores;
import dev.dedup.spi.DedupStoreProvider;
import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Opening by URI: a misspelt parameter or scheme, or a value of the wrong kind, fails before anything is opened,
 * naming the nearest valid name or what is allowed, and no credential shows in the failure. A typo that fell back to
 * a default namespace would make two services share their keys.
 */
abstract class UriContract extends ContractFixture {

    /** {@code uri} with {@code name=value} appended as one more query parameter. */
    static String withParameter(String uri, String parameter) {
        return uri + (uri.indexOf('?') < 0 ? "?" : uri.endsWith("?") || uri.endsWith("&") ? "" : "&") + parameter;
    }

    @Test
    @DisplayName("a misspelt namespace parameter fails, suggesting namespace, instead of opening the default namespace")
    void misspeltNamespaceIsRefused() {
        assertThatThrownBy(() -> DedupStores.open(withParameter(storeUri(namespace), "namepsace=" + namespace)))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namepsace'")
                .hasMessageContaining("Did you mean namespace?");
    }

    @Test
    @DisplayName("a misspelt scheme fails, suggesting this store's scheme")
    void misspeltSchemeIsRefused() {
        String uri = storeUri(namespace);
        String scheme = StoreUri.schemeOf(uri);
        String typo = swapTwoLetters(scheme);

        assertThatThrownBy(() -> DedupStores.open(typo + uri.substring(scheme.length())))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("no DedupStoreProvider for scheme '" + typo + "'")
                .hasMessageContaining("Did you mean")
                .hasMessageContaining(scheme);
    }

    @Test
    @DisplayName("every boolean, number, duration and choice parameter the store declares refuses a value of the wrong kind")
    void declaredParametersRefuseBadValues() {
        String uri = storeUri(namespace);
        UriParameters declared = provider(StoreUri.schemeOf(uri)).parameters();
        assertThat(declared.ownNames()).contains(StoreUri.NAMESPACE);
        for (UriParameters.Parameter parameter : declared.ownParameters()) {
            String bad = switch (parameter.kind()) {
                case BOOLEAN -> "yes";
                case INTEGER -> "99999999999999999999";
                case DURATION -> "99999999999999999d";
                case CHOICE -> "not-a-choice";
                default -> null;
            };
            if (bad == null) {
                continue;
            }
            // As a property, so that it replaces a value the store's URI may already give.
            assertThatThrownBy(() -> DedupStores.open(uri, Map.of(parameter.name(), bad)))
                    .as("%s=%s", parameter.name(), bad)
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining(parameter.name() + "=" + bad)
                    .hasMessageContaining(parameter.allowed());
        }
    }

    @Test
    @DisplayName("a refused URI shows no credential: user-info and secret-named parameters are masked")
    void refusedUriShowsNoSecret() {
        String uri = withParameter(storeUri(namespace), "apiToken=kit-t0ken-s3cret&namepsace=x");
        int slashes = uri.indexOf("//");
        if (slashes >= 0 && uri.indexOf('@') < 0) {
            uri = uri.substring(0, slashes + 2) + "kit-user:kit-pa55-s3cret@" + uri.substring(slashes + 2);
        }
        String withSecrets = uri;

        Throwable failure = catchThrowable(() -> DedupStores.open(withSecrets));

        assertThat(failure).isInstanceOf(DedupConfigurationException.class).hasMessageContaining("apiToken=***");
        NoSecrets.assertNoSecret(failure, "s3cret", "kit-user");
    }

    private static DedupStoreProvider provider(String scheme) {
        for (DedupStoreProvider provider : ServiceLoader.load(DedupStoreProvider.class)) {
            if (provider.schemes().contains(scheme)) {
                return provider;
            }
        }
        throw new AssertionError("no DedupStoreProvider for " + scheme + " on the test class path");
    }

    /** The scheme with its first two different adjacent letters swapped: one typo from it, and a scheme of nobody. */
    private static String swapTwoLetters(String scheme) {
        char[] chars = scheme.toCharArray();
        for (int i = chars.length > 5 && scheme.startsWith("jdbc:") ? 5 : 0; i + 1 < chars.length; i++) {
            if (Character.isLetter(chars[i]) && Character.isLetter(chars[i + 1]) && chars[i] != chars[i + 1]) {
                char first = chars[i];
                chars[i] = chars[i + 1];
                chars[i + 1] = first;
                return new String(chars);
            }
        }
        throw new AssertionError("cannot misspell scheme " + scheme);
    }
}
