package dev.dedup.spring.boot;

import dev.dedup.ResultCodec;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/** Stores an {@link Idempotent} method's result as JSON, and reads it back as the method's generic return type. */
final class JsonResultCodec implements ResultCodec<Object> {
    private final JsonMapper json;
    private final JavaType type;

    JsonResultCodec(JsonMapper json, JavaType type) {
        this.json = json;
        this.type = type;
    }

    @Override
    public byte[] encode(Object result) {
        return result == null ? null : json.writeValueAsBytes(result);
    }

    @Override
    public Object decode(byte[] bytes) {
        return json.readValue(bytes, type);
    }
}
