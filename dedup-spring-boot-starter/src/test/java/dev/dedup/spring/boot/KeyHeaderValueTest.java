package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The accepted forms of an {@code Idempotency-Key} value, and the refusals (over HTTP in the filter contract). */
class KeyHeaderValueTest {

    static Stream<Arguments> acceptedForms() {
        return Stream.of(
                Arguments.of("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"", "8e03978e-40d5-43e8-bc93-6894a57f9324"),
                Arguments.of("8e03978e-40d5-43e8-bc93-6894a57f9324", "8e03978e-40d5-43e8-bc93-6894a57f9324"),
                Arguments.of("\"order 42, retry\"", "order 42, retry"),
                Arguments.of("\"say \\\"hi\\\" \\\\ bye\"", "say \"hi\" \\ bye"),
                Arguments.of("  \"padded\"  ", "padded"),
                Arguments.of("b64+/key==:01*~._-", "b64+/key==:01*~._-"),
                Arguments.of("a!b#c$d%2F&e'f^g`h|i", "a!b#c$d%2F&e'f^g`h|i"));
    }

    @ParameterizedTest
    @MethodSource("acceptedForms")
    void acceptsAnSfStringOrABareKey(String header, String key) {
        assertThat(KeyHeaderValue.parse("Idempotency-Key", header)).isEqualTo(key);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"abc", "abc def", "\"a\", \"b\"", "a,b", "\"a\";p=1", "\"caf\u00e9\"", "caf\u00e9",
            "\"tab\there\"", "\"bad \\escape\"", "\"ends with \\"})
    void refusesAnythingElseSayingWhatIsAllowed(String header) {
        assertThatThrownBy(() -> KeyHeaderValue.parse("Idempotency-Key", header))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Idempotency-Key must be an RFC 8941 string")
                .hasMessageContaining("position");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   "})
    void anEmptyValueIsNoKey(String header) {
        assertThat(KeyHeaderValue.parse("Idempotency-Key", header)).isNull();
    }
}
