package dev.dedup.spring.boot;

/**
 * Reads one {@code Idempotency-Key} header value. The draft makes it an RFC 8941 sf-string
 * ({@code "8e03978e-40d5-43e8-bc93-6894a57f9324"}); many clients send the bare key, so a bare key of HTTP token
 * characters (RFC 9110 tchar), and of {@code : / =} that base64 and URN keys hold, is accepted too. Anything else (an unterminated string, a list, parameters, spaces, bytes outside
 * printable ASCII) is refused: guessing what a malformed key meant could merge two operations into one.
 */
final class KeyHeaderValue {
    /** What a refusal says is allowed, so a client can fix its request. */
    static final String ALLOWED = "an RFC 8941 string such as \"8e03978e-40d5-43e8-bc93-6894a57f9324\" (printable"
            + " ASCII between double quotes, with \\\" and \\\\ escaped), or a bare key of HTTP token characters"
            + " (letters, digits and ! # $ % & ' * + - . ^ _ ` | ~) and : / =";

    private KeyHeaderValue() {}

    /**
     * Parses a header value.
     *
     * @param header the header's name, for messages
     * @param value the value as received
     * @return the key, or null when the value is empty
     * @throws IllegalArgumentException naming what is wrong, where, and what is allowed
     */
    static String parse(String header, String value) {
        String trimmed = value.strip();
        if (trimmed.isEmpty()) {
            return null;
        }
        return trimmed.charAt(0) == '"' ? quoted(header, trimmed) : bare(header, trimmed);
    }

    private static String quoted(String header, String value) {
        StringBuilder key = new StringBuilder(value.length());
        for (int i = 1; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\') {
                char escaped = i + 1 < value.length() ? value.charAt(i + 1) : 0;
                if (escaped != '"' && escaped != '\\') {
                    throw refused(header, "a backslash at position " + i + " escapes neither \" nor \\");
                }
                key.append(escaped);
                i++;
            } else if (c == '"') {
                if (i != value.length() - 1) {
                    throw refused(header, "it holds more than one string (a list or parameters after position "
                            + i + ")");
                }
                return key.toString();
            } else if (c < 0x20 || c > 0x7e) {
                throw refused(header, "the character at position " + i + " is not printable ASCII");
            } else {
                key.append(c);
            }
        }
        throw refused(header, "the string that opens at position 0 is not closed by a double quote");
    }

    private static String bare(String header, String value) {
        for (int i = 0; i < value.length(); i++) {
            if (!isBareKeyCharacter(value.charAt(i))) {
                throw refused(header, "the character at position " + i + " is not allowed in a bare key");
            }
        }
        return value;
    }

    private static boolean isBareKeyCharacter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "!#$%&'*+-.^_`|~:/=".indexOf(c) >= 0;
    }

    private static IllegalArgumentException refused(String header, String problem) {
        return new IllegalArgumentException(header + " must be " + ALLOWED + "; " + problem);
    }
}
