package dev.dedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dedup.spi.StoreUri;
import dev.dedup.spi.UriParameters;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class StoreUriTest {
    private static final UriParameters DECLARED = UriParameters.builder()
            .text("table", "dedup_claims")
            .bool("createSchema", false)
            .integer("poolSize", 10, 1, 200)
            .duration("timeout", Duration.ofSeconds(5), Duration.ofMillis(1), Duration.ofMinutes(10))
            .choice("verifyPeer", null, "NONE", "CA", "FULL")
            .httpUrl("endpoint")
            .driver("sslmode", "ApplicationName")
            .build();

    private static StoreUri checked(String uri) {
        return StoreUri.parse(uri, Map.of()).check(DECLARED);
    }

    @Test
    void takesTheUriApart() {
        StoreUri uri = StoreUri.parse("postgresql://db:5432/app?table=dedup.claims&namespace=orders&x=a%20b",
                Map.of("namespace", "billing"));

        assertThat(uri.scheme()).isEqualTo("postgresql");
        assertThat(uri.location()).isEqualTo("//db:5432/app");
        assertThat(uri.parameter("table")).contains("dedup.claims");
        assertThat(uri.parameter("x")).contains("a b");
        assertThat(uri.namespace()).isEqualTo("billing");
        assertThat(uri.hosts()).containsExactly(new StoreUri.HostPort("db", 5432));
        assertThat(uri.path()).contains("app");
    }

    @Test
    void jdbcUrisKeepTheirSubprotocol() {
        assertThat(StoreUri.schemeOf("jdbc:postgresql://db/app")).isEqualTo("jdbc:postgresql");
        assertThat(StoreUri.schemeOf("Redis://host")).isEqualTo("redis");
    }

    @Test
    @DisplayName("values and user-info are percent-decoded by RFC 3986: a + stays a plus")
    void decodesByRfc3986() {
        StoreUri uri = StoreUri.parse("redis://us%3Aer:p%2Bq+r%40s@h:1?clientName=a+b%20c&na%6De=x", Map.of());

        assertThat(uri.user()).contains("us:er");
        assertThat(uri.password()).contains("p+q+r@s");
        assertThat(uri.parameter("clientName")).contains("a+b c");
        assertThat(uri.parameter("name")).contains("x");
        assertThat(StoreUri.parse("redis://only%2Bpass@h", Map.of()).user()).contains("only+pass");
        assertThat(StoreUri.parse("redis://only@h", Map.of()).password()).isEmpty();
    }

    @Test
    @DisplayName("a broken percent-escape is a configuration error that names the parameter, not its value")
    void refusesBrokenEscapes() {
        assertThatThrownBy(() -> StoreUri.parse("redis://h?password=s3cret%G1", Map.of()))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("parameter password")
                .hasMessageContaining("two hex digits")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> StoreUri.parse("redis://u:s3cret%@h", Map.of()))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("user-info")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> StoreUri.parse("redis://h?x=%C3%28", Map.of()))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("not UTF-8");
    }

    @Test
    @DisplayName("hosts: several, IPv6 in brackets, ports checked")
    void parsesHosts() {
        assertThat(StoreUri.parse("redis-cluster://a:7001,[::1]:7002,b/x", Map.of()).hosts()).containsExactly(
                new StoreUri.HostPort("a", 7001), new StoreUri.HostPort("::1", 7002), new StoreUri.HostPort("b", -1));
        assertThat(new StoreUri.HostPort("::1", 7002)).hasToString("[::1]:7002");
        assertThatThrownBy(() -> StoreUri.parse("redis://u:s3cret@h:notaport", Map.of()).hosts())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("'notaport'").hasMessageContaining("[1, 65535]")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> StoreUri.parse("redis://h:70000", Map.of()).hosts())
                .hasMessageContaining("[1, 65535]");
        assertThatThrownBy(() -> StoreUri.parse("redis://a,,b", Map.of()).hosts())
                .hasMessageContaining("the host is empty");
        assertThatThrownBy(() -> StoreUri.parse("redis://cache%20one:1", Map.of()).hosts())
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("'cache%20one:1'").hasMessageContaining("IPv6 address in brackets");
        assertThatThrownBy(() -> StoreUri.parse("redis://[zz]:1", Map.of()).hosts())
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("'[zz]:1'");
    }

    @Test
    @DisplayName("a misspelt parameter fails naming it, the nearest allowed name and the allowed ones")
    void unknownParametersSuggestTheNearest() {
        assertThatThrownBy(() -> checked("postgresql://h/db?namepsace=orders"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("unknown parameter 'namepsace'")
                .hasMessageContaining("Did you mean namespace?")
                .hasMessageContaining("[createSchema, endpoint, namespace, poolSize, table, timeout, verifyPeer]")
                .hasMessageContaining("[ApplicationName, sslmode]");
        assertThatThrownBy(() -> checked("postgresql://h/db?tabel=x")).hasMessageContaining("Did you mean table?");
        assertThatThrownBy(() -> checked("postgresql://h/db?timeuot=1s")).hasMessageContaining("Did you mean timeout?");
        assertThatThrownBy(() -> checked("postgresql://h/db?applicationName=x"))
                .hasMessageContaining("Did you mean ApplicationName?");
        assertThatThrownBy(() -> checked("postgresql://h/db?zzzzzz=1")).hasMessageNotContaining("Did you mean");
    }

    @Test
    @DisplayName("properties are checked like query parameters")
    void propertiesAreChecked() {
        assertThatThrownBy(() -> StoreUri.parse("postgresql://h/db", Map.of("namepsace", "x")).check(DECLARED))
                .isInstanceOf(DedupConfigurationException.class).hasMessageContaining("Did you mean namespace?");
    }

    @Test
    @DisplayName("one of dedup's parameters given twice is refused rather than one of them silently winning")
    void refusesRepeatedOwnParameters() {
        assertThatThrownBy(() -> checked("postgresql://h/db?namespace=a&namespace=b"))
                .isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("namespace is given more than once");
    }

    @Test
    @DisplayName("booleans are true or false only; the message names the value and what is allowed")
    void booleansAreStrict() {
        assertThat(checked("postgresql://h/db?createSchema=true").bool("createSchema")).isTrue();
        assertThat(checked("postgresql://h/db").bool("createSchema")).isFalse();
        for (String value : List.of("yes", "TRUE", "1", "")) {
            assertThatThrownBy(() -> checked("postgresql://h/db?createSchema=" + value))
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("createSchema=" + value + " ")
                    .hasMessageContaining("must be true or false");
        }
    }

    @Test
    @DisplayName("integers are bounded; overflow is a configuration error with the range, not an exception escaping")
    void integersAreBounded() {
        assertThat(checked("postgresql://h/db?poolSize=200").integer("poolSize")).isEqualTo(200);
        assertThat(checked("postgresql://h/db").integer("poolSize")).isEqualTo(10);
        for (String value : List.of("0", "201", "99999999999999999999", "-1", "ten", "1.5")) {
            assertThatThrownBy(() -> checked("postgresql://h/db?poolSize=" + value))
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("poolSize=" + value)
                    .hasMessageContaining("a whole number in [1, 200]");
        }
    }

    @Test
    @DisplayName("durations: short forms and ISO-8601, bounded; overflow names the range instead of ArithmeticException")
    void durationsAreBounded() {
        assertThat(checked("x://h?timeout=500ms").duration("timeout")).isEqualTo(Duration.ofMillis(500));
        assertThat(checked("x://h?timeout=5s").duration("timeout")).isEqualTo(Duration.ofSeconds(5));
        assertThat(checked("x://h?timeout=PT2M").duration("timeout")).isEqualTo(Duration.ofMinutes(2));
        assertThat(checked("x://h").duration("timeout")).isEqualTo(Duration.ofSeconds(5));
        for (String value : List.of("0s", "11m", "99999999999999999d", "999999999999999999999s", "PT-5S", "soon",
                " 5s")) {
            assertThatThrownBy(() -> checked("x://h?timeout=" + value.replace(" ", "%20")))
                    .isInstanceOf(DedupConfigurationException.class)
                    .hasMessageContaining("timeout=" + value)
                    .hasMessageContaining("a duration in [1ms, 10m]")
                    .hasMessageContaining("500ms");
        }
    }

    @Test
    @DisplayName("choices and URLs are checked against what is allowed")
    void choicesAndUrls() {
        assertThat(checked("x://h?verifyPeer=CA").choice("verifyPeer")).contains("CA");
        assertThatThrownBy(() -> checked("x://h?verifyPeer=false"))
                .hasMessageContaining("verifyPeer=false").hasMessageContaining("one of [NONE, CA, FULL]");
        assertThat(checked("x://h?endpoint=http://127.0.0.1:8000").httpUrl("endpoint").orElseThrow().getPort())
                .isEqualTo(8000);
        assertThatThrownBy(() -> checked("x://h?endpoint=localhost:8000"))
                .hasMessageContaining("endpoint=localhost:8000").hasMessageContaining("http://");
    }

    @Test
    @DisplayName("the namespace is checked like every parameter")
    void namespaceIsChecked() {
        assertThat(checked("x://h?namespace=orders").namespace()).isEqualTo("orders");
        assertThatThrownBy(() -> checked("x://h?namespace=a:b")).isInstanceOf(DedupConfigurationException.class)
                .hasMessageContaining("'a:b'").hasMessageContaining("A-Z a-z 0-9");
    }

    @Test
    @DisplayName("driver parameters pass through in order, repeats kept, matched ignoring case only when the driver does")
    void driverParametersPassThrough() {
        StoreUri uri = checked("x://h?sslmode=require&table=t&sslmode=verify-full");
        assertThat(uri.driverParameters()).containsExactly(Map.entry("sslmode", "require"),
                Map.entry("sslmode", "verify-full"));
        assertThatThrownBy(() -> checked("x://h?SSLMODE=require")).hasMessageContaining("Did you mean sslmode?");

        UriParameters ignoringCase = UriParameters.builder().driver("replicaSet").driverIgnoresCase().build();
        assertThat(StoreUri.parse("m://h?replicaset=rs0", Map.of()).check(ignoringCase).driverParameters())
                .containsExactly(Map.entry("replicaset", "rs0"));
    }

    @Test
    @DisplayName("typed getters need a checked URI and a declared name")
    void typedGettersNeedACheckedUri() {
        assertThatThrownBy(() -> StoreUri.parse("x://h?timeout=1s", Map.of()).duration("timeout"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("check(");
        assertThatThrownBy(() -> checked("x://h").integer("undeclared")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("redaction masks the whole user-info and every parameter named like a secret, for any scheme")
    void redactsSecrets() {
        assertThat(StoreUri.redact("redis://user:pa55@host:6379/0?password=x&namespace=n&token=t"))
                .isEqualTo("redis://***@host:6379/0?password=***&namespace=n&token=***");
        assertThat(StoreUri.redact("redis://s3cret@host")).isEqualTo("redis://***@host");
        assertThat(StoreUri.redact("rediss-cluster://s3cret@h1:1,h2:2?timeout=1s"))
                .isEqualTo("rediss-cluster://***@h1:1,h2:2?timeout=1s");
        assertThat(StoreUri.redact("mongodb://u:p@ss/w0rd@h/db")).isEqualTo("mongodb://***@h/db");
        assertThat(StoreUri.redact("x://h?sslPassword=a&apiToken=b&SecretAccessKey=c&accessKeyId=d&sslkey=e&db=f"))
                .isEqualTo("x://h?sslPassword=***&apiToken=***&SecretAccessKey=***&accessKeyId=***&sslkey=***&db=f");
        assertThat(StoreUri.redact("x://h?pass%77ord=s3cret")).isEqualTo("x://h?pass%77ord=***");
        assertThat(StoreUri.redact("memory:")).isEqualTo("memory:");
        assertThat(StoreUri.parse("redis://s3cret@host?namespace=n", Map.of())).hasToString("redis://***@host?namespace=n");
    }

    @Test
    @DisplayName("secrets() holds the user-info, the password and secret-named values, raw and decoded")
    void collectsSecrets() {
        StoreUri uri = StoreUri.parse("redis://u:p%2Bw@h?apiToken=t%40k&namespace=n",
                Map.of("secretAccessKey", "sak"));

        assertThat(uri.secrets()).contains("u:p%2Bw", "u:p+w", "p+w", "t%40k", "t@k", "sak")
                .doesNotContain("n", "h");
    }
}
