package dev.dedup.spi;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupLimits;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A store URI taken apart for a provider: {@code scheme:location?name=value&...}, with extra properties merged over
 * the query parameters. {@code jdbc:postgresql://...} has the scheme {@code jdbc:postgresql}.
 */
public final class StoreUri {
    private static final Pattern SCHEME = Pattern.compile("(?i)(jdbc:)?[a-z][a-z0-9+.-]*");
    private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");
    private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/:@?#]*:)[^/@?#]*@");
    private static final Pattern SECRET_PARAMETER =
            Pattern.compile("(?i)([?&](?:password|secret|token|secretKey|secretAccessKey|accessKey)=)[^&]*");

    private final String uri;
    private final String scheme;
    private final String location;
    private final Map<String, String> parameters;

    private StoreUri(String uri, String scheme, String location, Map<String, String> parameters) {
        this.uri = uri;
        this.scheme = scheme;
        this.location = location;
        this.parameters = Collections.unmodifiableMap(parameters);
    }

    /** Parses {@code uri}; {@code properties} (may be empty) override query parameters of the same name. */
    public static StoreUri parse(String uri, Map<String, String> properties) {
        if (uri == null || uri.isBlank()) {
            throw new DedupConfigurationException("store URI must not be " + (uri == null ? "null" : "blank")
                    + "; expected for example memory:, postgresql://host/db, redis://host:6379");
        }
        String scheme = schemeOf(uri);
        String rest = uri.substring(scheme.length() + 1);
        int query = rest.indexOf('?');
        String location = query < 0 ? rest : rest.substring(0, query);
        Map<String, String> parameters = new LinkedHashMap<>();
        if (query >= 0) {
            for (String pair : rest.substring(query + 1).split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String name = decode(eq < 0 ? pair : pair.substring(0, eq));
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                parameters.put(name, value);
            }
        }
        if (properties != null) {
            properties.forEach((name, value) -> {
                if (name == null || value == null) {
                    throw new DedupConfigurationException("store properties must not hold null names or values, but"
                            + " held " + name + "=" + (value == null ? "null" : "<value>"));
                }
                parameters.put(name, value);
            });
        }
        return new StoreUri(uri, scheme, location, parameters);
    }

    /** The scheme of {@code uri} in lower case, or a configuration error naming the URI. */
    public static String schemeOf(String uri) {
        int colon = uri.indexOf(':');
        if (uri.regionMatches(true, 0, "jdbc:", 0, 5)) {
            colon = uri.indexOf(':', 5);
        }
        String scheme = colon < 0 ? "" : uri.substring(0, colon);
        if (!SCHEME.matcher(scheme).matches()) {
            throw new DedupConfigurationException("store URI " + redact(uri) + " has no valid scheme; expected"
                    + " scheme:..., for example memory:, postgresql://host/db, redis://host:6379");
        }
        return scheme.toLowerCase(Locale.ROOT);
    }

    /** {@code uri} with passwords, tokens and keys replaced by {@code ***}, safe for messages and logs. */
    public static String redact(String uri) {
        if (uri == null) {
            return "null";
        }
        String redacted = USER_INFO_PASSWORD.matcher(uri).replaceAll("$1***@");
        return SECRET_PARAMETER.matcher(redacted).replaceAll("$1***");
    }

    /** The URI as given. Do not log it: use {@link #redacted()}. */
    public String uri() {
        return uri;
    }

    public String redacted() {
        return redact(uri);
    }

    /** Lower-case scheme, for example {@code redis} or {@code jdbc:postgresql}. */
    public String scheme() {
        return scheme;
    }

    /** What lies between {@code scheme:} and {@code ?}, for example {@code //host:6379/0}. */
    public String location() {
        return location;
    }

    /** Query parameters and properties, properties winning. */
    public Map<String, String> parameters() {
        return parameters;
    }

    public Optional<String> parameter(String name) {
        return Optional.ofNullable(parameters.get(name));
    }

    /** The {@code namespace} parameter, or {@link DedupLimits#DEFAULT_NAMESPACE}. */
    public String namespace() {
        String namespace = parameters.getOrDefault("namespace", DedupLimits.DEFAULT_NAMESPACE);
        try {
            return DedupLimits.checkNamespace(namespace);
        } catch (IllegalArgumentException e) {
            throw new DedupConfigurationException("parameter " + e.getMessage() + " in " + redacted(), e);
        }
    }

    /** A duration parameter: ISO-8601 ({@code PT5S}) or a number with ms, s, m, h or d ({@code 500ms}). */
    public Duration duration(String name, Duration defaultValue) {
        String value = parameters.get(name);
        if (value == null) {
            return defaultValue;
        }
        Matcher matcher = SHORT_DURATION.matcher(value.trim());
        try {
            Duration duration;
            if (matcher.matches()) {
                long amount = Long.parseLong(matcher.group(1));
                duration = switch (matcher.group(2)) {
                    case "ms" -> Duration.ofMillis(amount);
                    case "s" -> Duration.ofSeconds(amount);
                    case "m" -> Duration.ofMinutes(amount);
                    case "h" -> Duration.ofHours(amount);
                    default -> Duration.ofDays(amount);
                };
            } else {
                duration = Duration.parse(value.trim());
            }
            if (duration.isNegative() || duration.isZero()) {
                throw new DateTimeParseException("not positive", value, 0);
            }
            return duration;
        } catch (DateTimeParseException | NumberFormatException e) {
            throw new DedupConfigurationException("parameter " + name + "=" + value + " in " + redacted()
                    + " is not a positive duration; allowed: 500ms, 5s, 2m, 1h, 1d or ISO-8601 such as PT5S", e);
        }
    }

    /** Fails with the list of allowed names when a parameter outside {@code allowed} was given (catches typos). */
    public void requireOnly(Set<String> allowed) {
        for (String name : parameters.keySet()) {
            if (!allowed.contains(name)) {
                throw new DedupConfigurationException("unknown parameter '" + name + "' in " + redacted()
                        + "; allowed for " + scheme + ": " + new TreeSet<>(allowed));
            }
        }
    }

    @Override
    public String toString() {
        return redacted();
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }
}
