package dev.dedup.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupStoreException;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class RedactionTest {
    private static final List<String> SECRETS = List.of("s3cret", "s3cret-and-more");

    static void assertNoSecretAnywhere(Throwable failure, String secret) {
        for (Throwable each = failure; each != null; each = each.getCause()) {
            assertThat(String.valueOf(each.getMessage())).doesNotContain(secret);
            assertThat(each.toString()).doesNotContain(secret);
            for (Throwable suppressed : each.getSuppressed()) {
                assertNoSecretAnywhere(suppressed, secret);
            }
        }
    }

    @Test
    @DisplayName("names containing pass, secret, token or key, in any case, are secret")
    void secretNames() {
        assertThat(List.of("password", "sslPassword", "SECRET", "secretAccessKey", "apiToken", "accessKeyId",
                "sslkey", "passphrase")).allMatch(Redaction::isSecretName);
        assertThat(List.of("namespace", "timeout", "user", "table", "database")).noneMatch(Redaction::isSecretName);
    }

    @Test
    @DisplayName("scrub masks every secret, the longest first, and leaves clean text alone")
    void scrubsText() {
        assertThat(Redaction.scrub("x s3cret-and-more y s3cret", SECRETS)).isEqualTo("x *** y ***");
        assertThat(Redaction.scrub("clean", SECRETS)).isEqualTo("clean");
        assertThat(Redaction.scrub((String) null, SECRETS)).isNull();
        assertThat(Redaction.scrub("from [redis://app:*****@h:1?timeout=1s] and mongodb://u@h", List.of()))
                .isEqualTo("from [redis://***@h:1?timeout=1s] and mongodb://***@h");
    }

    @Test
    @DisplayName("an exception chain echoing a secret is rebuilt clean, keeping its kind, retryability and class names")
    void scrubsExceptionChains() {
        IOException driver = new IOException("auth failed for redis://s3cret@h");
        driver.addSuppressed(new IllegalStateException("also s3cret"));
        DedupStoreException failure = new DedupStoreException("open failed: s3cret", new RuntimeException(driver),
                true);

        RuntimeException scrubbed = Redaction.scrub(failure, SECRETS);

        assertThat(scrubbed).isInstanceOf(DedupStoreException.class).hasMessage("open failed: ***");
        assertThat(((DedupStoreException) scrubbed).isRetryable()).isTrue();
        assertNoSecretAnywhere(scrubbed, "s3cret");
        Throwable cleanDriver = scrubbed.getCause().getCause();
        assertThat(cleanDriver).isInstanceOf(Redaction.RedactedException.class)
                .hasMessage("java.io.IOException: auth failed for redis://***@h");
        assertThat(((Redaction.RedactedException) cleanDriver).originalClass()).isEqualTo("java.io.IOException");
        assertThat(cleanDriver.getStackTrace()).isEqualTo(driver.getStackTrace());
        assertThat(cleanDriver.getSuppressed()).hasSize(1);

        DedupConfigurationException clean = new DedupConfigurationException("nothing here", new IOException("nor"));
        assertThat(Redaction.scrub(clean, SECRETS)).isSameAs(clean);
        IllegalStateException echoed = new IllegalStateException("to redis://app:*****@h");
        assertThat(Redaction.scrub(echoed, List.of())).hasMessageEndingWith("to redis://***@h");
        IllegalStateException masked = new IllegalStateException("to redis://***@h");
        assertThat(Redaction.scrub(masked, List.of())).isSameAs(masked);
        assertThat(Redaction.scrub(new IllegalArgumentException("bad s3cret"), SECRETS))
                .isInstanceOf(Redaction.RedactedException.class).hasMessageNotContaining("s3cret");
    }
}
