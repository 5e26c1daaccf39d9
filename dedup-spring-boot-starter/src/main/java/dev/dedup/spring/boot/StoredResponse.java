package dev.dedup.spring.boot;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The record kept for a completed key: the first request's fingerprint, and the response to replay.
 *
 * @param fingerprint the SHA-256 of the first request's method, path, query and body
 * @param status the response status
 * @param headers the selected response headers, by name, each with its values in order
 * @param body the response body; empty when {@code bodyOmitted}
 * @param bodyOmitted true when the body was too large to store, so the replay carries none
 */
record StoredResponse(byte[] fingerprint, int status, Map<String, List<String>> headers, byte[] body,
        boolean bodyOmitted) {

    StoredResponse {
        Objects.requireNonNull(fingerprint, "fingerprint");
        headers = Map.copyOf(headers);
        Objects.requireNonNull(body, "body");
    }

    /** {@return whether this record was stored for a request with this fingerprint} */
    boolean matches(byte[] requestFingerprint) {
        return Arrays.equals(fingerprint, requestFingerprint);
    }

    /** {@return the same response without its body} */
    StoredResponse withoutBody() {
        return new StoredResponse(fingerprint, status, headers, new byte[0], true);
    }
}
