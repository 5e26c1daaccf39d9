package dev.dedup.outbox;

import java.util.HashMap;
import java.util.Map;

/**
 * The {@code headers} column's text on every database: a flat JSON object of strings, written by the append and read
 * by the relay here, so that no dialect needs JSON functions of its own (MySQL and MariaDB have no way to list an
 * object's keys with their values in SQL).
 */
final class HeadersJson {
    private final String text;
    private int at;

    private HeadersJson(String text) {
        this.text = text;
    }

    /** {@return {@code names} and {@code values} as a JSON object, in the order given} */
    static String write(String[] names, String[] values) {
        StringBuilder json = new StringBuilder("{");
        for (int i = 0; i < names.length; i++) {
            if (i > 0) {
                json.append(", ");
            }
            string(json, names[i]).append(": ");
            string(json, values[i]);
        }
        return json.append('}').toString();
    }

    private static StringBuilder string(StringBuilder json, String value) {
        json.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20) {
                json.append(String.format("\\u%04x", (int) c));
            } else {
                json.append(c);
            }
        }
        return json.append('"');
    }

    /**
     * Reads an object of strings as the database returns it (PostgreSQL's jsonb and MySQL's JSON reformat it).
     *
     * @throws IllegalStateException naming the column's text when it is not such an object (edited by hand)
     */
    static Map<String, String> read(String json) {
        HeadersJson reader = new HeadersJson(json);
        try {
            return reader.object();
        } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
            throw new IllegalStateException("outbox headers must be a JSON object of strings, but was " + json, e);
        }
    }

    private Map<String, String> object() {
        Map<String, String> headers = new HashMap<>();
        expect('{');
        if (peek() == '}') {
            at++;
        } else {
            do {
                String name = string();
                expect(':');
                headers.put(name, string());
            } while (next() == ',');
            at--;
            expect('}');
        }
        if (peek() != 0) {
            throw new IllegalArgumentException("text after the object");
        }
        return headers;
    }

    private String string() {
        expect('"');
        StringBuilder value = new StringBuilder();
        for (char c = text.charAt(at++); c != '"'; c = text.charAt(at++)) {
            if (c != '\\') {
                value.append(c);
                continue;
            }
            char escaped = text.charAt(at++);
            switch (escaped) {
                case 'b' -> value.append('\b');
                case 'f' -> value.append('\f');
                case 'n' -> value.append('\n');
                case 'r' -> value.append('\r');
                case 't' -> value.append('\t');
                case 'u' -> {
                    value.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> value.append(escaped);   // " \ /
            }
        }
        return value.toString();
    }

    /** The next character that is not white space, consumed. */
    private char next() {
        char c = peek();
        at++;
        return c;
    }

    /** The next character that is not white space, or 0 at the end. */
    private char peek() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
        return at < text.length() ? text.charAt(at) : 0;
    }

    private void expect(char wanted) {
        if (next() != wanted) {
            throw new IllegalArgumentException("expected " + wanted + " at " + (at - 1));
        }
    }
}
