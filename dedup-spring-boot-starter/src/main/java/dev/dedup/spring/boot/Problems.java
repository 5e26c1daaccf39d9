package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;

/**
 * The filters' own answers, as RFC 9457 problem details ({@code application/problem+json}), each with a
 * {@code type} that links to the documentation of that problem (the Idempotency-Key draft asks for one).
 */
final class Problems {
    /** Where the problem types are documented, unless {@code dedup.http.problem-type-base} says otherwise. */
    static final String DEFAULT_TYPE_BASE =
            "https://github.com/dedup-dev/dedup/blob/main/docs/spring-boot.md";

    /** The filter's problems; each slug is an anchor in the documentation page. */
    enum Problem {
        KEY_MISSING(400, "idempotency-key-missing"),
        KEY_INVALID(400, "idempotency-key-invalid"),
        UNAUTHENTICATED(401, "idempotency-key-unauthenticated"),
        IN_PROGRESS(409, "idempotency-key-in-progress"),
        NOT_REPLAYABLE(409, "idempotency-key-not-replayable"),
        BODY_TOO_LARGE(413, "idempotency-key-body-too-large"),
        KEY_REUSED(422, "idempotency-key-reused"),
        STORE_UNAVAILABLE(503, "idempotency-key-store-unavailable");

        final int status;
        final String slug;

        Problem(int status, String slug) {
            this.status = status;
            this.slug = slug;
        }
    }

    private final String typeBase;

    private Problems(String typeBase) {
        this.typeBase = typeBase;
    }

    /** The problems of {@code dedup.http.problem-type-base}; a value that is no absolute URI fails the start. */
    static Problems documentedAt(String typeBase) {
        String base = typeBase == null ? DEFAULT_TYPE_BASE : typeBase;
        try {
            URI uri = new URI(base);
            if (!uri.isAbsolute() || uri.getRawFragment() != null) {
                throw new URISyntaxException(base, "not an absolute URI without a fragment");
            }
        } catch (URISyntaxException e) {
            throw new DedupConfigurationException("dedup.http.problem-type-base='" + base + "' is not valid: it must"
                    + " be an absolute URI without a '#' fragment (each problem adds '#<slug>'), for example "
                    + DEFAULT_TYPE_BASE);
        }
        return new Problems(base);
    }

    /** {@return the problem's {@code type}: the documentation base and the problem's anchor} */
    String type(Problem problem) {
        return typeBase + "#" + problem.slug;
    }

    /** {@return the problem's {@code application/problem+json} body} */
    byte[] body(Problem problem, String title, String detail) {
        return ("{\"type\":" + json(type(problem)) + ",\"title\":" + json(title) + ",\"status\":"
                + problem.status + ",\"detail\":" + json(detail) + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static String json(String text) {
        StringBuilder quoted = new StringBuilder(text.length() + 2).append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        quoted.append(String.format("\\u%04x", (int) c));
                    } else {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }
}
