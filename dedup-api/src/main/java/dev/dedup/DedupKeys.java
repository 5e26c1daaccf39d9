package dev.dedup;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Objects;

/**
 * Builds keys: composite keys from several parts, and fixed-length hashes for keys that may exceed
 * {@link DedupLimits#MAX_KEY_BYTES}.
 */
public final class DedupKeys {
    private static final String HASH_PREFIX = "sha256:";

    private DedupKeys() {}

    /**
     * A composite key whose parts can never run into each other: {@code of("a|b", "c")} differs from
     * {@code of("a", "b|c")}. Long results are hashed with {@link #fit(String)}.
     *
     * @param parts one or more parts, none null; {@code |} and {@code \\} in them are escaped
     * @return the parts joined with {@code |}, or its hash when that is longer than {@link DedupLimits#MAX_KEY_BYTES}
     * @throws IllegalArgumentException if there are no parts or a part is null
     */
    public static String of(String... parts) {
        Objects.requireNonNull(parts, "parts");
        if (parts.length == 0) {
            throw new IllegalArgumentException("parts must hold at least one part, but was empty");
        }
        StringBuilder key = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            if (parts[i] == null) {
                throw new IllegalArgumentException("parts[" + i + "] must not be null");
            }
            if (i > 0) {
                key.append('|');
            }
            // Escape the separator and the escape character, so the join is reversible.
            key.append(parts[i].replace("\\", "\\\\").replace("|", "\\|"));
        }
        return fit(key.toString());
    }

    /**
     * Makes a key fit the store's limit, keeping it readable when it already fits.
     *
     * @param key the key, not null
     * @return {@code key} itself when it is within {@link DedupLimits#MAX_KEY_BYTES} in UTF-8, else its
     *     {@link #hash(String)}
     */
    public static String fit(String key) {
        Objects.requireNonNull(key, "key");
        return key.getBytes(StandardCharsets.UTF_8).length <= DedupLimits.MAX_KEY_BYTES ? key : hash(key);
    }

    /**
     * Hashes a value into a fixed-length key: two different values practically never share one.
     *
     * @param value the value, not null, of any length
     * @return {@code sha256:} followed by the URL-safe Base64 SHA-256 of the UTF-8 value: always 50 ASCII characters
     */
    public static String hash(String value) {
        Objects.requireNonNull(value, "value");
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
            return HASH_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required on every Java platform", e);
        }
    }
}
