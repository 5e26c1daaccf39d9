package dev.dedup.spring.boot;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** Writes the filter's own answers as RFC 9457 problem details ({@code application/problem+json}). */
final class Problems {
    private Problems() {}

    static void write(HttpServletResponse response, int status, String title, String detail) throws IOException {
        response.resetBuffer();
        response.setStatus(status);
        response.setContentType("application/problem+json");
        byte[] body = ("{\"type\":\"about:blank\",\"title\":" + json(title) + ",\"status\":" + status
                + ",\"detail\":" + json(detail) + "}").getBytes(StandardCharsets.UTF_8);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
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
