package dev.dedup.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The accepted forms of an {@code Idempotency-Key} value, and the refusals (over HTTP in the filter contract). */
class KeyHeaderValueTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "\"8e03978e-40d5-43e8-bc93-6894a57f9324\"|8e03978e-40d5-43e8-bc93-6894a57f9324",
            "8e03978e-40d5-43e8-bc93-6894a57f9324|8e03978e-40d5-43e8-bc93-6894a57f9324",
            "\"order 42, retry\"|order 42, retry",
            "\"say \\\"hi\\\" \\\\ bye\"|say \"hi\" \\ bye",
            "  \"padded\"  |padded",
            "b64+/key==:01*~._-|b64+/key==:01*~._-"})
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
