package dev.dedup.store.redis;

import dev.dedup.DedupConfigurationException;
import dev.dedup.RecordState;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * The value stored under a key, in one compact binary string the Lua scripts write and check with
 * {@code string.sub}:
 *
 * <pre>
 * byte 0       state: 'P' in progress, 'C' completed, 'F' failed
 * bytes 1-8    expiry, epoch milliseconds on the server's clock, big-endian (the key expires at it: PXAT)
 * bytes 9-44   owner token (36 ASCII characters)
 * byte 45      flags: 1 if a result follows, plus 2 if a fingerprint follows (0 to 3)
 * byte 46      with flag 2: the fingerprint's length n (1 to 64), then n bytes of fingerprint
 * then         with flag 1: the result, to the end
 * </pre>
 *
 * <p>Records written before fingerprints have flags 0 or 1 and read the same.
 */
record RedisRecord(RecordState state, Instant expiresAt, String owner, byte[] result, byte[] fingerprint) {
    static final int OWNER_LENGTH = 36;
    private static final int HEADER = 1 + 8 + OWNER_LENGTH + 1;

    /** The first byte of a record, by {@link RecordState#ordinal()}: P(rogress), C(ompleted), F(ailed). */
    private static final byte[] STATE_CODES = {'P', 'C', 'F'};

    /** The one-byte code the scripts write for {@code state}. */
    static byte[] code(RecordState state) {
        return new byte[] {STATE_CODES[state.ordinal()]};
    }

    static RedisRecord decode(byte[] value) {
        RecordState state = value.length < HEADER ? null : stateOf(value[0]);
        if (state == null) {
            throw new DedupConfigurationException("not a dedup record (" + value.length + " bytes); is the key prefix"
                    + " shared with other data?");
        }
        ByteBuffer buffer = ByteBuffer.wrap(value);
        buffer.get();
        Instant expiresAt = Instant.ofEpochMilli(buffer.getLong());
        byte[] owner = new byte[OWNER_LENGTH];
        buffer.get(owner);
        int flags = buffer.get();
        byte[] fingerprint = null;
        if ((flags & 2) != 0) {
            fingerprint = new byte[buffer.get() & 0xff];
            buffer.get(fingerprint);
        }
        byte[] result = null;
        if ((flags & 1) != 0) {
            result = new byte[buffer.remaining()];
            buffer.get(result);
        }
        return new RedisRecord(state, expiresAt, new String(owner, StandardCharsets.US_ASCII), result, fingerprint);
    }

    private static RecordState stateOf(byte code) {
        for (RecordState state : RecordState.values()) {
            if (STATE_CODES[state.ordinal()] == code) {
                return state;
            }
        }
        return null;
    }
}
