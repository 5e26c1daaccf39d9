package dev.dedup;

import java.nio.charset.StandardCharsets;

/**
 * Turns a handler's result into the bytes a completed record stores, and back, so a duplicate can replay the
 * result (an {@code Idempotency-Key} response, for example) without running the handler again.
 */
public interface ResultCodec<R> {

    /** The bytes to store for {@code result}; null stores no result. */
    byte[] encode(R result);

    /** The result from stored bytes (never called with null). */
    R decode(byte[] bytes);

    /** Stores nothing: for handlers whose effect is all that matters. */
    static ResultCodec<Void> none() {
        return new ResultCodec<>() {
            @Override
            public byte[] encode(Void result) {
                return null;
            }

            @Override
            public Void decode(byte[] bytes) {
                return null;
            }
        };
    }

    /** Strings as UTF-8: JSON bodies, ids. */
    static ResultCodec<String> utf8() {
        return new ResultCodec<>() {
            @Override
            public byte[] encode(String result) {
                return result == null ? null : result.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public String decode(byte[] bytes) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
    }

    /** Raw bytes, stored as they are. */
    static ResultCodec<byte[]> bytes() {
        return new ResultCodec<>() {
            @Override
            public byte[] encode(byte[] result) {
                return result;
            }

            @Override
            public byte[] decode(byte[] bytes) {
                return bytes;
            }
        };
    }
}
