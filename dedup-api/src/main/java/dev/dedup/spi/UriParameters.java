package dev.dedup.spi;

import dev.dedup.DedupLimits;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The query parameters a {@link DedupStoreProvider} accepts: its own, each with a type, a default and bounds, and the
 * driver's that it passes through as they are. {@link StoreUri#check} refuses any other name (naming the nearest
 * allowed one) and any value outside its type or bounds, before the provider builds a client. {@code namespace} is
 * always declared.
 */
public final class UriParameters {
    private static final Pattern SHORT_DURATION = Pattern.compile("(\\d{1,18})(ms|s|m|h|d)");
    private static final Pattern WHOLE_NUMBER = Pattern.compile("[+-]?\\d{1,18}");

    private final Map<String, Parameter> own;
    private final Set<String> driver;
    private final Set<String> driverLowerCase;
    private final boolean driverIgnoresCase;

    private UriParameters(Builder builder) {
        this.own = Collections.unmodifiableMap(new LinkedHashMap<>(builder.own));
        this.driver = Collections.unmodifiableSet(new TreeSet<>(builder.driver));
        this.driverIgnoresCase = builder.driverIgnoresCase;
        Set<String> lower = new TreeSet<>();
        builder.driver.forEach(name -> lower.add(name.toLowerCase(Locale.ROOT)));
        this.driverLowerCase = Collections.unmodifiableSet(lower);
    }

    /** {@return a builder with {@code namespace} already declared} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Looks up one of the provider's own parameters.
     *
     * @param name the parameter's name, case-sensitive
     * @return the parameter, empty when it is not the provider's own (it may still be a driver parameter)
     */
    public Optional<Parameter> own(String name) {
        return Optional.ofNullable(own.get(name));
    }

    /** {@return the provider's own parameter names, {@code namespace} first, then in declaration order} */
    public Set<String> ownNames() {
        return own.keySet();
    }

    /** {@return the provider's own parameters, {@code namespace} first, then in declaration order; a copy} */
    public List<Parameter> ownParameters() {
        return List.copyOf(own.values());
    }

    /** {@return the driver's parameter names passed through, sorted, as declared; unmodifiable} */
    public Set<String> driverNames() {
        return driver;
    }

    /**
     * Tells whether a name is a driver parameter the provider passes through.
     *
     * @param name a parameter's name as given in the URI
     * @return true when it is declared as a driver parameter (ignoring case where the driver does)
     */
    public boolean isDriver(String name) {
        return driverIgnoresCase ? driverLowerCase.contains(name.toLowerCase(Locale.ROOT)) : driver.contains(name);
    }

    /** What a message lists as allowed: the own parameters, then the driver's. */
    String describeAllowed() {
        String described = "dedup parameters " + new TreeSet<>(own.keySet());
        return driver.isEmpty() ? described + " (no driver parameters are passed through)"
                : described + "; driver parameters passed through " + driver;
    }

    /** The kinds of value a parameter holds. */
    public enum Kind {
        /** Any text, or text matching a pattern; read with {@link StoreUri#text}. */
        TEXT,
        /** Exactly {@code true} or {@code false}; read with {@link StoreUri#bool}. */
        BOOLEAN,
        /** A whole number within bounds; read with {@link StoreUri#integer}. */
        INTEGER,
        /** A duration within bounds, such as {@code 5s} or {@code PT5S}; read with {@link StoreUri#duration}. */
        DURATION,
        /** One of a fixed list of words; read with {@link StoreUri#choice}. */
        CHOICE,
        /** An absolute http or https URL; read with {@link StoreUri#httpUrl}. */
        HTTP_URL
    }

    /** One of a provider's own parameters: its name, its kind, its default and what values it allows. */
    public static final class Parameter {
        private final String name;
        private final Kind kind;
        private final Object defaultValue;
        private final long min;
        private final long max;
        private final Duration minDuration;
        private final Duration maxDuration;
        private final List<String> choices;
        private final Pattern pattern;
        private final String patternDescription;

        private Parameter(String name, Kind kind, Object defaultValue, long min, long max, Duration minDuration,
                Duration maxDuration, List<String> choices, Pattern pattern, String patternDescription) {
            this.name = name;
            this.kind = kind;
            this.defaultValue = defaultValue;
            this.min = min;
            this.max = max;
            this.minDuration = minDuration;
            this.maxDuration = maxDuration;
            this.choices = choices;
            this.pattern = pattern;
            this.patternDescription = patternDescription;
        }

        /** {@return the parameter's name as written in a URI, case-sensitive} */
        public String name() {
            return name;
        }

        /** {@return the kind of value the parameter holds, which says which {@link StoreUri} getter reads it} */
        public Kind kind() {
            return kind;
        }

        /**
         * {@return the value used when the parameter is not given, of the kind's Java type ({@code String},
         * {@code Boolean}, {@code Integer}, {@code Duration}, {@code URI}); null when there is none}
         */
        public Object defaultValue() {
            return defaultValue;
        }

        /** {@return what the parameter allows, for messages: for example {@code a whole number in [1, 200]}} */
        public String allowed() {
            return switch (kind) {
                case BOOLEAN -> "true or false";
                case INTEGER -> "a whole number in [" + min + ", " + max + "]";
                case DURATION -> "a duration in [" + text(minDuration) + ", " + text(maxDuration) + "], written as"
                        + " 500ms, 5s, 2m, 1h, 1d or ISO-8601 such as PT5S";
                case CHOICE -> "one of " + choices;
                case HTTP_URL -> "an absolute http:// or https:// URL with a host, for example http://localhost:8000";
                case TEXT -> patternDescription == null ? "any text" : patternDescription;
            };
        }

        /** The typed value of {@code value}, or {@link IllegalArgumentException} saying what is allowed. */
        Object parse(String value) {
            Object parsed = switch (kind) {
                case BOOLEAN -> value.equals("true") ? Boolean.TRUE : value.equals("false") ? Boolean.FALSE : null;
                case INTEGER -> integer(value);
                case DURATION -> duration(value);
                case CHOICE -> choices.contains(value) ? value : null;
                case HTTP_URL -> httpUrl(value);
                case TEXT -> text(value);
            };
            if (parsed == null) {
                throw new IllegalArgumentException("must be " + allowed());
            }
            return parsed;
        }

        private Integer integer(String value) {
            if (!WHOLE_NUMBER.matcher(value).matches()) {
                return null;
            }
            long number = Long.parseLong(value);
            return number >= min && number <= max ? (int) number : null;
        }

        private Duration duration(String value) {
            Duration duration;
            Matcher matcher = SHORT_DURATION.matcher(value);
            try {
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
                    duration = Duration.parse(value);
                }
            } catch (DateTimeParseException | ArithmeticException e) {
                return null; // not a duration, or more than Duration can hold: both outside the bounds
            }
            return duration.compareTo(minDuration) >= 0 && duration.compareTo(maxDuration) <= 0 ? duration : null;
        }

        private static URI httpUrl(String value) {
            try {
                URI uri = new URI(value);
                String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
                return (scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null ? uri : null;
            } catch (URISyntaxException e) {
                return null;
            }
        }

        private String text(String value) {
            if (name.equals(StoreUri.NAMESPACE)) {
                DedupLimits.checkNamespace(value); // its own message names the value and the allowed characters
                return value;
            }
            return pattern == null || pattern.matcher(value).matches() ? value : null;
        }

        private static String text(Duration duration) {
            long millis = duration.toMillis();
            if (millis % 3_600_000 == 0) {
                return millis / 3_600_000 + "h";
            }
            if (millis % 60_000 == 0) {
                return millis / 60_000 + "m";
            }
            return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
        }
    }

    /** Declares a provider's parameters; each name once. */
    public static final class Builder {
        private final Map<String, Parameter> own = new LinkedHashMap<>();
        private final Set<String> driver = new TreeSet<>();
        private boolean driverIgnoresCase;

        private Builder() {
            declare(new Parameter(StoreUri.NAMESPACE, Kind.TEXT, DedupLimits.DEFAULT_NAMESPACE, 0, 0, null, null,
                    null, null, "1 to 64 characters of A-Z a-z 0-9 . _ -"));
        }

        /**
         * Declares a text parameter, free or matching {@code pattern}.
         *
         * @param name the parameter's name, case-sensitive
         * @param defaultValue the value when not given, or null for none
         * @param pattern what the whole value must match, or null for any text
         * @param patternDescription what {@code pattern} allows, for messages, such as {@code "a table name"}; null
         *     when {@code pattern} is
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is already declared
         */
        public Builder text(String name, String defaultValue, Pattern pattern, String patternDescription) {
            return declare(new Parameter(name, Kind.TEXT, defaultValue, 0, 0, null, null, null, pattern,
                    patternDescription));
        }

        /**
         * Declares a free-text parameter.
         *
         * @param name the parameter's name, case-sensitive
         * @param defaultValue the value when not given, or null for none
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is already declared
         */
        public Builder text(String name, String defaultValue) {
            return text(name, defaultValue, null, null);
        }

        /**
         * Declares a boolean parameter: exactly {@code true} or {@code false}; {@code yes}, {@code 1} or {@code TRUE}
         * are refused, not guessed.
         *
         * @param name the parameter's name, case-sensitive
         * @param defaultValue the value when not given
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is already declared
         */
        public Builder bool(String name, boolean defaultValue) {
            return declare(new Parameter(name, Kind.BOOLEAN, defaultValue, 0, 0, null, null, null, null, null));
        }

        /**
         * Declares a whole-number parameter.
         *
         * @param name the parameter's name, case-sensitive
         * @param defaultValue the value when not given
         * @param min the smallest value allowed, inclusive
         * @param max the largest value allowed, inclusive
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is already declared
         */
        public Builder integer(String name, int defaultValue, int min, int max) {
            return declare(new Parameter(name, Kind.INTEGER, defaultValue, min, max, null, null, null, null, null));
        }

        /**
         * Declares a duration parameter, written as 500ms, 5s, 2m, 1h, 1d or ISO-8601 ({@code PT5S}).
         *
         * @param name the parameter's name, case-sensitive
         * @param defaultValue the value when not given, or null for none
         * @param min the shortest value allowed, inclusive
         * @param max the longest value allowed, inclusive
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is already declared
         */
        public Builder duration(String name, Duration defaultValue, Duration min, Duration max) {
            return declare(new Parameter(name, Kind.DURATION, defaultValue, 0, 0, min, max, null, null, null));
        }

        /**
         * Declares a parameter that takes one of a few words.
         *
         * @param name the parameter's name, case-sensitive
         * @param defaultValue the value when not given, or null for none
         * @param choices the allowed values, matched exactly (case-sensitive)
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is already declared
         */
        public Builder choice(String name, String defaultValue, String... choices) {
            return declare(new Parameter(name, Kind.CHOICE, defaultValue, 0, 0, null, null, List.of(choices), null,
                    null));
        }

        /**
         * Declares an absolute http(s) URL parameter, such as an endpoint override; it has no default.
         *
         * @param name the parameter's name, case-sensitive
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is already declared
         */
        public Builder httpUrl(String name) {
            return declare(new Parameter(name, Kind.HTTP_URL, null, 0, 0, null, null, null, null, null));
        }

        /**
         * Declares driver parameters passed through as given; each is named here, so a typo is caught, not ignored.
         *
         * @param names the driver's parameter names, as the driver spells them
         * @return this builder
         * @throws IllegalArgumentException if a name is already declared
         */
        public Builder driver(String... names) {
            for (String name : names) {
                if (own.containsKey(name) || !driver.add(name)) {
                    throw new IllegalArgumentException("parameter " + name + " is declared twice");
                }
            }
            return this;
        }

        /**
         * The driver reads its parameter names in any case (MongoDB does), so match them ignoring case.
         *
         * @return this builder
         */
        public Builder driverIgnoresCase() {
            this.driverIgnoresCase = true;
            return this;
        }

        /** {@return the declared parameters, immutable} */
        public UriParameters build() {
            return new UriParameters(this);
        }

        private Builder declare(Parameter parameter) {
            if (own.containsKey(parameter.name) || driver.contains(parameter.name)) {
                throw new IllegalArgumentException("parameter " + parameter.name + " is declared twice");
            }
            own.put(parameter.name, parameter);
            return this;
        }
    }
}
