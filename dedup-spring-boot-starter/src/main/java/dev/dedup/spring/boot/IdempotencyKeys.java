package dev.dedup.spring.boot;

import dev.dedup.DedupKeys;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Enumeration;

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
     * The key the client sent, read by {@link KeyHeaderValue}: an RFC 8941 sf-string, or a bare key.
     *
     * @return the key, or null when the header is missing or empty
     * @throws IllegalArgumentException if the header is sent twice, is malformed, is too long or is empty between
     *     its quotes
     */
    String clientKey(HttpServletRequest request) {
        Enumeration<String> values = request.getHeaders(keyHeader);
        if (values == null || !values.hasMoreElements()) {
            return null;
        }
        String value = values.nextElement();
        if (values.hasMoreElements()) {
            throw new IllegalArgumentException(keyHeader + " was sent more than once; send one " + keyHeader
                    + " header with one key");
        }
        String key = KeyHeaderValue.parse(keyHeader, value);
        if (key == null) {
            return null;
        }
        if (key.isEmpty()) {
            throw new IllegalArgumentException(keyHeader + " must not be an empty string");
        }
        if (key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException(keyHeader + " must be at most " + MAX_KEY_LENGTH
                    + " characters, but was " + key.length());
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
