package dev.dedup.spring.boot;

import dev.dedup.ResultCodec;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * Stores an {@link Idempotent} method's result as JSON, and reads it back as the method's generic return type. A
 * null result is stored as JSON {@code null}, so a record without a result always means "not stored".
 */
final class JsonResultCodec implements ResultCodec<Object> {
    /** What a stored JSON {@code null} decodes to: a decoder's null would read as "nothing stored". */
    static final Object NULL_RESULT = new Object();

    private final JsonMapper json;
    private final JavaType type;

    JsonResultCodec(JsonMapper json, JavaType type) {
        this.json = json;
        this.type = type;
    }

    @Override
    public byte[] encode(Object result) {
        Class<?> declared = type.getRawClass();
        if (result != null && !ReplayableTypes.replaysAs(declared, result.getClass())) {
            // Read back as the declared type, a subclass's own fields would be lost: store nothing rather than a
            // replay that differs from what the first call returned.
            throw new IllegalArgumentException("the result is a " + result.getClass().getName() + ", not the declared "
                    + declared.getName() + ", and would not replay as itself");
        }
        return json.writeValueAsBytes(result);
    }

    @Override
    public Object decode(byte[] bytes) {
        Object value = json.readValue(bytes, type);
        return value == null ? NULL_RESULT : value;
    }
}
