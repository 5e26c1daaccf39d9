package dev.dedup.spring.boot;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Type;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.beans.factory.BeanFactory;

/** {@link Idempotent} results as JSON with Jackson 2, Spring Boot 3's. */
final class JacksonResultJson implements ResultJson {
    private final ObjectMapper json;

    private JacksonResultJson(ObjectMapper json) {
        this.json = json;
    }

    /**
     * {@return the application's {@code ObjectMapper}, looked up when called; if it has none, one with the modules
     * on the class path (java.time among them, as Jackson 3 has built in)}
     */
    static Supplier<ResultJson> of(BeanFactory beans) {
        return () -> new JacksonResultJson(beans.getBeanProvider(ObjectMapper.class)
                .getIfAvailable(() -> JsonMapper.builder().findAndAddModules().build()));
    }

    @Override
    public byte[] write(Object value) {
        try {
            return json.writeValueAsBytes(value);
        } catch (IOException e) {   // Jackson 2's exceptions are checked; Jackson 3's, as the callers expect, are not
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Function<byte[], Object> reader(Type type) {
        JavaType declared = json.getTypeFactory().constructType(type);
        return bytes -> {
            try {
                return json.readValue(bytes, declared);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }
}
