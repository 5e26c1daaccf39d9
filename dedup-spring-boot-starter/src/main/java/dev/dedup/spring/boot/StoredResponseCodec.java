package dev.dedup.spring.boot;

import dev.dedup.DedupLimits;
import dev.dedup.ResultCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Encodes a {@link StoredResponse} into the store's result bytes: a version byte, the fingerprint, the status, the
 * headers, a flag and the body. A record over the store's result limit is stored without its body, so the key
 * still answers duplicates with the first status and a fingerprint check.
 */
final class StoredResponseCodec implements ResultCodec<StoredResponse> {
    private static final int VERSION = 1;

    @Override
    public byte[] encode(StoredResponse response) {
        byte[] whole = write(response);
        return whole.length <= DedupLimits.MAX_RESULT_BYTES ? whole : write(response.withoutBody());
    }

    @Override
    public StoredResponse decode(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalArgumentException("unknown stored response version " + version);
            }
            byte[] fingerprint = in.readNBytes(in.readUnsignedShort());
            int status = in.readUnsignedShort();
            int names = in.readUnsignedShort();
            Map<String, List<String>> headers = new LinkedHashMap<>();
            for (int i = 0; i < names; i++) {
                String name = in.readUTF();
                int count = in.readUnsignedShort();
                List<String> values = new ArrayList<>(count);
                for (int j = 0; j < count; j++) {
                    values.add(in.readUTF());
                }
                headers.put(name, List.copyOf(values));
            }
            boolean bodyOmitted = in.readBoolean();
            byte[] body = in.readNBytes(in.readInt());
            return new StoredResponse(fingerprint, status, headers, body, bodyOmitted);
        } catch (IOException e) {
            throw new UncheckedIOException("the stored response is truncated", e);
        }
    }

    private static byte[] write(StoredResponse response) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + response.body().length);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeShort(response.fingerprint().length);
            out.write(response.fingerprint());
            out.writeShort(response.status());
            out.writeShort(response.headers().size());
            for (Map.Entry<String, List<String>> header : response.headers().entrySet()) {
                out.writeUTF(header.getKey());
                out.writeShort(header.getValue().size());
                for (String value : header.getValue()) {
                    out.writeUTF(value);
                }
            }
            out.writeBoolean(response.bodyOmitted());
            out.writeInt(response.body().length);
            out.write(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }
}
