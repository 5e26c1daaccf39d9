package dev.dedup.spring.boot;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** What makes two requests with one key "the same request": the SHA-256 of method, path, query and body. */
final class RequestFingerprint {
    private RequestFingerprint() {}

    /**
     * {@return the SHA-256 of the method, the path, the query string as sent (none and empty are the same) and the
     * body, each length-prefixed so no two inputs collide}
     */
    static byte[] of(String method, String path, String query, byte[] body) {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        update(sha256, method.getBytes(StandardCharsets.UTF_8));
        update(sha256, path.getBytes(StandardCharsets.UTF_8));
        if (query != null && !query.isEmpty()) {
            // Only when there is one: a request without a query keeps the fingerprint it had before queries counted.
            update(sha256, new byte[] {'?'});
            update(sha256, query.getBytes(StandardCharsets.UTF_8));
        }
        update(sha256, body);
        return sha256.digest();
    }

    private static void update(MessageDigest digest, byte[] part) {
        int length = part.length;
        digest.update(new byte[] {(byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8),
                (byte) length});
        digest.update(part);
    }
}
