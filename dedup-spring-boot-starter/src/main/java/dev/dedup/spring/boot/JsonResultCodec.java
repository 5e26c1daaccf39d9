package dev.dedup.spring.boot;

import dev.dedup.ResultCodec;
import java.lang.reflect.Type;
import java.util.function.Function;

/**
 * Stores an {@link Idempotent} method's result as JSON, and reads it back as the method's generic return type. A
 * null result is stored as JSON {@code null}, so a record without a result always means "not stored".
 */
final class JsonResultCodec implements ResultCodec<Object> {
    /** What a stored JSON {@code null} decodes to: a decoder's null would read as "nothing stored". */
    static final Object NULL_RESULT = new Object();

    private final ResultJson json;
    private final Function<byte[], Object> reader;
    private final Class<?> declared;

    /** For results declared as {@code type}, whose class is {@code declared}. */
    JsonResultCodec(ResultJson json, Type type, Class<?> declared) {
        this.json = json;
        this.reader = json.reader(type);
        this.declared = declared;
    }

    @Override
    public byte[] encode(Object result) {
        if (result != null && !ReplayableTypes.replaysAs(declared, result.getClass())) {
            // Read back as the declared type, a subclass's own fields would be lost: store nothing rather than a
            // replay that differs from what the first call returned.
            throw new IllegalArgumentException("the result is a " + result.getClass().getName() + ", not the declared "
                    + declared.getName() + ", and would not replay as itself");
        }
        return json.write(result);
    }

    @Override
    public Object decode(byte[] bytes) {
        Object value = reader.apply(bytes);
        return value == null ? NULL_RESULT : value;
    }
}
