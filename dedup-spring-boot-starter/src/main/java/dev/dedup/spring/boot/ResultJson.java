package dev.dedup.spring.boot;

import java.lang.reflect.Type;
import java.util.function.Function;

/**
 * JSON for {@link Idempotent} methods' results and fingerprints, by the Jackson of the application's Spring Boot
 * line: Jackson 3 in this starter, Jackson 2 in the Spring Boot 3 starter (each has its own {@code JacksonResultJson}).
 */
interface ResultJson {
    /** {@return {@code value} as JSON; null as JSON {@code null}} */
    byte[] write(Object value);

    /** {@return what reads JSON back as a value of {@code type}: null for JSON {@code null}} */
    Function<byte[], Object> reader(Type type);
}
