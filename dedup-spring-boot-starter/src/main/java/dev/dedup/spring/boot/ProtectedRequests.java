package dev.dedup.spring.boot;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/** Which requests need an {@code Idempotency-Key}: a protected method on a protected path. */
final class ProtectedRequests {
    private final Set<String> methods;
    private final List<PathPattern> paths;

    ProtectedRequests(List<String> methods, List<String> paths) {
        this.methods = methods.stream().map(m -> m.strip().toUpperCase(Locale.ROOT)).collect(Collectors.toSet());
        this.paths = paths.stream().map(PathPatternParser.defaultInstance::parse).toList();
    }

    /**
     * {@return whether a request needs a key}
     *
     * @param method the request's method
     * @param path the request's path inside the application's context path, as sent (not decoded)
     */
    boolean matches(String method, String path) {
        return methods.contains(method)
                && paths.stream().anyMatch(pattern -> pattern.matches(PathContainer.parsePath(path)));
    }
}
