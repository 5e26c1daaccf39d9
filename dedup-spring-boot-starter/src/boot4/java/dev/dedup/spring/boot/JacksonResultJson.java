package dev.dedup.spring.boot;

import java.lang.reflect.Type;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.beans.factory.BeanFactory;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/** {@link Idempotent} results as JSON with Jackson 3, Spring Boot 4's. */
final class JacksonResultJson implements ResultJson {
    private final JsonMapper json;

    private JacksonResultJson(JsonMapper json) {
        this.json = json;
    }

    /** {@return the application's {@code JsonMapper}, or a default one if it has none, looked up when called} */
    static Supplier<ResultJson> of(BeanFactory beans) {
        return () -> new JacksonResultJson(
                beans.getBeanProvider(JsonMapper.class).getIfAvailable(() -> JsonMapper.builder().build()));
    }

    @Override
    public byte[] write(Object value) {
        return json.writeValueAsBytes(value);
    }

    @Override
    public Function<byte[], Object> reader(Type type) {
        JavaType declared = json.getTypeFactory().constructType(type);
        return bytes -> json.readValue(bytes, declared);
    }
}
