package dev.dedup.spring.boot;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * A request whose body was read once, to fingerprint it, and is served again from memory to the handler. Form
 * parameters that the container parses from the body ({@code getParameter}) are not served from it: protected
 * endpoints take their body as a stream ({@code @RequestBody}).
 */
final class BufferedBodyRequest extends HttpServletRequestWrapper {
    private final byte[] body;

    private BufferedBodyRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
    }

    /** {@return the request with its body read, or null when the body is longer than {@code maxBytes}} */
    static BufferedBodyRequest read(HttpServletRequest request, long maxBytes) throws IOException {
        long declared = request.getContentLengthLong();
        if (declared > maxBytes) {
            return null;
        }
        int limit = (int) Math.min(maxBytes, Integer.MAX_VALUE - 16);
        byte[] body = request.getInputStream().readNBytes(limit + 1);
        return body.length > limit ? null : new BufferedBodyRequest(request, body);
    }

    /** {@return the body's bytes, as read} */
    byte[] body() {
        return body.clone();
    }

    @Override
    public ServletInputStream getInputStream() {
        ByteArrayInputStream in = new ByteArrayInputStream(body);
        return new ServletInputStream() {
            @Override
            public boolean isFinished() {
                return in.available() == 0;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
                throw new UnsupportedOperationException("protected endpoints read their body synchronously");
            }

            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] buffer, int offset, int length) {
                return in.read(buffer, offset, length);
            }
        };
    }

    @Override
    public BufferedReader getReader() {
        String encoding = getCharacterEncoding();
        Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
        return new BufferedReader(new InputStreamReader(getInputStream(), charset));
    }

    @Override
    public int getContentLength() {
        return body.length;
    }

    @Override
    public long getContentLengthLong() {
        return body.length;
    }
}
