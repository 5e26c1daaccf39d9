package dev.dedup;

import java.nio.charset.StandardCharsets;

/**
 * Turns a handler's result into the bytes a completed record stores, and back, so a duplicate can replay the
 * result (an {@code Idempotency-Key} response, for example) without running the handler again.
 *
 * @param <R> the handler's result type
 */
public interface ResultCodec<R> {

    /**
     * Serializes a handler's result for storage.
     *
     * @param result what the handler returned, possibly null
     * @return the bytes to store, at most {@link DedupLimits#MAX_RESULT_BYTES}; null stores no result
     */
    byte[] encode(R result);

    /**
     * Deserializes a stored result for a duplicate.
     *
     * @param bytes the stored bytes, never null
     * @return the result as the handler returned it
     */
    R decode(byte[] bytes);

    /** {@return a codec that stores nothing: for handlers whose effect is all that matters} */
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

    /** {@return a codec for strings as UTF-8: JSON bodies, ids; a null string stores no result} */
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

    /** {@return a codec for raw bytes, stored as they are, not copied} */
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
