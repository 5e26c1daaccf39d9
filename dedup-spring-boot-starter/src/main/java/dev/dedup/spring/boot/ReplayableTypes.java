package dev.dedup.spring.boot;

import java.lang.reflect.Modifier;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.util.ClassUtils;

/** Which declared return types a stored JSON result reads back as the object the method returned. */
final class ReplayableTypes {
    private static final String JSON_TYPE_INFO = "com.fasterxml.jackson.annotation.JsonTypeInfo";

    private ReplayableTypes() {}

    /**
     * {@return false for {@code Object}, interfaces and abstract classes (JSON does not record which class was
     * written), unless they are containers JSON rebuilds or carry {@code @JsonTypeInfo}}
     */
    static boolean canReplay(Class<?> declared) {
        if (declared.isPrimitive() || containerOf(declared)) {
            return true;
        }
        boolean open = declared == Object.class || declared.isInterface()
                || Modifier.isAbstract(declared.getModifiers());
        return !open || recordsItsType(declared);
    }

    /**
     * {@return whether a result of class {@code actual}, stored as JSON, reads back as {@code declared} without
     * losing what makes it an {@code actual}}
     */
    static boolean replaysAs(Class<?> declared, Class<?> actual) {
        // A CGLIB proxy of the declared class is the declared class; a JDK type's subclasses (a Timestamp for a
        // Date) read back as the JDK type by design.
        return declared.isPrimitive() || ClassUtils.getUserClass(actual) == declared || declared.isEnum()
                || containerOf(declared) || declared.getName().startsWith("java.") || recordsItsType(declared);
    }

    private static boolean recordsItsType(Class<?> declared) {
        return MergedAnnotations.from(declared, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY)
                .isPresent(JSON_TYPE_INFO);
    }

    /** {@return whether JSON rebuilds the type as a standard container (list, set, map, optional)} */
    static boolean containerOf(Class<?> declared) {
        return Collection.class.isAssignableFrom(declared) || Map.class.isAssignableFrom(declared)
                || declared == Optional.class || declared.isArray();
    }
}
