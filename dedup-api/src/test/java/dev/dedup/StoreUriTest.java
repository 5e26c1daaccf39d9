package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.spi.StoreUri;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StoreUriTest {

    @Test
    void takesTheUriApart() {
        StoreUri uri = StoreUri.parse("postgresql://db:5432/app?table=dedup.claims&namespace=orders&x=a%20b",
                Map.of("namespace", "billing"));

        assertThat(uri.scheme()).isEqualTo("postgresql");
        assertThat(uri.location()).isEqualTo("//db:5432/app");
        assertThat(uri.parameter("table")).contains("dedup.claims");
        assertThat(uri.parameter("x")).contains("a b");
        assertThat(uri.namespace()).isEqualTo("billing");
    }

    @Test
    void jdbcUrisKeepTheirSubprotocol() {
        assertThat(StoreUri.schemeOf("jdbc:postgresql://db/app")).isEqualTo("jdbc:postgresql");
        assertThat(StoreUri.schemeOf("Redis://host")).isEqualTo("redis");
    }

    @Test
    void parsesDurations() {
        StoreUri uri = StoreUri.parse("x:?a=500ms&b=5s&c=PT2M&d=0s&e=soon", Map.of());

        assertThat(uri.duration("a", null)).isEqualTo(Duration.ofMillis(500));
        assertThat(uri.duration("b", null)).isEqualTo(Duration.ofSeconds(5));
        assertThat(uri.duration("c", null)).isEqualTo(Duration.ofMinutes(2));
        assertThat(uri.duration("missing", Duration.ofSeconds(9))).isEqualTo(Duration.ofSeconds(9));
        assertThatThrownBy(() -> uri.duration("d", null)).hasMessageContaining("d=0s").hasMessageContaining("500ms");
        assertThatThrownBy(() -> uri.duration("e", null)).isInstanceOf(DedupConfigurationException.class);
    }

    @Test
    void redactsSecrets() {
        assertThat(StoreUri.redact("redis://user:pa55@host:6379/0?password=x&namespace=n&token=t"))
                .isEqualTo("redis://user:***@host:6379/0?password=***&namespace=n&token=***");
        assertThat(StoreUri.redact("memory:")).isEqualTo("memory:");
    }
}
