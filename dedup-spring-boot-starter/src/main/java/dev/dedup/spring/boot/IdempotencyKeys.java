package dev.dedup.spring.boot;

import dev.dedup.DedupKeys;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;

/**
 * Reads the key from its header and scopes it: two principals, or two tenants, sending the same key are two keys.
 */
final class IdempotencyKeys {
    /** The longest key accepted, in characters; the draft leaves it to the server (UUIDs are 36). */
    static final int MAX_KEY_LENGTH = 255;

    private final String keyHeader;
    private final String tenantHeader;

    IdempotencyKeys(String keyHeader, String tenantHeader) {
        this.keyHeader = keyHeader;
        this.tenantHeader = tenantHeader == null || tenantHeader.isBlank() ? null : tenantHeader;
    }

    /** {@return the header that carries the key} */
    String keyHeader() {
        return keyHeader;
    }

    /**
     * The key the client sent: an RFC 8941 sf-string ({@code "8e03978e-..."}), or the bare token that many clients
     * send.
     *
     * @return the key, or null when the header is missing or empty
     * @throws IllegalArgumentException if the key is too long or holds control characters
     */
    String clientKey(HttpServletRequest request) {
        String value = request.getHeader(keyHeader);
        if (value == null) {
            return null;
        }
        String key = value.strip();
        if (key.length() >= 2 && key.startsWith("\"") && key.endsWith("\"")) {
            key = key.substring(1, key.length() - 1);
        }
        if (key.isEmpty()) {
            return null;
        }
        if (key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException(keyHeader + " must be at most " + MAX_KEY_LENGTH
                    + " characters, but was " + key.length());
        }
        if (key.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new IllegalArgumentException(keyHeader + " must not hold control characters");
        }
        return key;
    }

    /** {@return the store key: the client's key within its principal's and its tenant's scope} */
    String scopedKey(HttpServletRequest request, String clientKey) {
        Principal principal = request.getUserPrincipal();
        String user = principal == null ? "anonymous" : "user:" + principal.getName();
        String tenant = tenantHeader == null ? "any-tenant" : "tenant:" + nullToEmpty(request.getHeader(tenantHeader));
        return DedupKeys.of("http", user, tenant, clientKey);
    }

    private static String nullToEmpty(String value) {
        return value == null ? "" : value;
    }
}
