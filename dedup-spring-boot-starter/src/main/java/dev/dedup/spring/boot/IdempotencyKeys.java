package dev.dedup.spring.boot;

import dev.dedup.DedupKeys;
import java.util.List;

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

    /** {@return the header that scopes keys by tenant, or null} */
    String tenantHeader() {
        return tenantHeader;
    }

    /**
     * The key the client sent, read by {@link KeyHeaderValue}: an RFC 8941 sf-string, or a bare key.
     *
     * @param values the values of the key header, in order; empty or null when it was not sent
     * @return the key, or null when the header is missing or empty
     * @throws IllegalArgumentException if the header is sent twice, is malformed, is too long or is empty between
     *     its quotes
     */
    String clientKey(List<String> values) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw new IllegalArgumentException(keyHeader + " was sent more than once; send one " + keyHeader
                    + " header with one key");
        }
        String key = KeyHeaderValue.parse(keyHeader, values.get(0));
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

    /**
     * {@return the store key: the client's key within its principal's and its tenant's scope}
     *
     * @param principal the authenticated principal's name, or null for an anonymous caller
     * @param tenant the tenant header's value, or null when it was not sent
     * @param clientKey the client's key
     */
    String scopedKey(String principal, String tenant, String clientKey) {
        String user = principal == null ? "anonymous" : "user:" + principal;
        String scope = tenantHeader == null ? "any-tenant" : "tenant:" + (tenant == null ? "" : tenant);
        return DedupKeys.of("http", user, scope, clientKey);
    }
}
