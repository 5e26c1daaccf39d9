package dev.dedup.spi;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Percent-encoding as RFC 3986 defines it, for URI parts. Unlike {@link java.net.URLDecoder} (HTML forms), a
 * {@code +} is a plus, never a space: a password {@code a+b} stays {@code a+b}.
 */
public final class PercentCoding {
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private PercentCoding() {}

    /**
     * Decodes every {@code %XX} as a UTF-8 byte. Throws {@link IllegalArgumentException} saying what is wrong (without
     * repeating the text, which may be a secret) for a {@code %} not followed by two hex digits or bytes that are not
     * UTF-8.
     *
     * @param text a URI part as written, such as a user info or a query value
     * @return the decoded text; {@code text} itself when it has no {@code %}
     * @throws IllegalArgumentException if an escape is malformed or the escaped bytes are not UTF-8
     */
    public static String decode(String text) {
        if (text.indexOf('%') < 0) {
            return text;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(text.length());
        StringBuilder decoded = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c != '%') {
                flush(bytes, decoded);
                decoded.append(c);
                continue;
            }
            if (i + 2 >= text.length() || hex(text.charAt(i + 1)) < 0 || hex(text.charAt(i + 2)) < 0) {
                throw new IllegalArgumentException("a '%' at position " + i + " is not followed by two hex digits"
                        + " (RFC 3986 percent-encoding; write %25 for a literal %)");
            }
            bytes.write(hex(text.charAt(i + 1)) * 16 + hex(text.charAt(i + 2)));
            i += 2;
        }
        flush(bytes, decoded);
        return decoded.toString();
    }

    /**
     * Decodes for display, never failing.
     *
     * @param text a URI part as written
     * @return {@link #decode}'s result, or {@code text} as it is when it is not valid percent-encoding
     */
    public static String decodeLeniently(String text) {
        try {
            return decode(text);
        } catch (IllegalArgumentException e) {
            return text;
        }
    }

    /**
     * Encodes every character except RFC 3986's unreserved ones ({@code A-Z a-z 0-9 - . _ ~}) as UTF-8 {@code %XX}.
     *
     * @param text any text, such as a password to put into a URI
     * @return the encoded text, safe in any URI part; upper-case hex digits
     */
    public static String encode(String text) {
        StringBuilder encoded = new StringBuilder(text.length());
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xFF);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                encoded.append(c);
            } else {
                encoded.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
            }
        }
        return encoded.toString();
    }

    private static void flush(ByteArrayOutputStream bytes, StringBuilder decoded) {
        if (bytes.size() == 0) {
            return;
        }
        try {
            decoded.append(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())));
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("its percent-escapes are not UTF-8");
        }
        bytes.reset();
    }

    private static int hex(char c) {
        return Character.digit(c, 16);
    }
}
