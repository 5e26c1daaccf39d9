package dev.dedup.spring.boot;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/** How long each protected path keeps its responses: {@code dedup.http.retention-by-path}, else {@code dedup.retention}. */
final class PathRetentions {
    private final Duration retention;
    private final Map<PathPattern, Duration> byPath = new LinkedHashMap<>();

    PathRetentions(Duration retention, Map<String, Duration> byPath) {
        this.retention = retention;
        byPath.forEach((path, pathRetention) -> this.byPath.put(PathPatternParser.defaultInstance.parse(path),
                pathRetention));
    }

    /** {@return every retention in use, the default first} */
    Set<Duration> all() {
        Set<Duration> all = new LinkedHashSet<>();
        all.add(retention);
        all.addAll(byPath.values());
        return all;
    }

    /** {@return the retention of a path (inside the context path, as sent): its first matching pattern's} */
    Duration of(String path) {
        if (byPath.isEmpty()) {
            return retention;
        }
        PathContainer container = PathContainer.parsePath(path);
        for (Map.Entry<PathPattern, Duration> entry : byPath.entrySet()) {
            if (entry.getKey().matches(container)) {
                return entry.getValue();
            }
        }
        return retention;
    }
}
