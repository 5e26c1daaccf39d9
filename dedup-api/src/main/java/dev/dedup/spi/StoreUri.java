package dev.dedup.spi;

import dev.dedup.DedupConfigurationException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A store URI taken apart for a provider: {@code scheme://[user-info@]host[:port][,host[:port]...][/path]?name=value&...},
 * with extra properties merged over the query parameters. {@code jdbc:postgresql://...} has the scheme
 * {@code jdbc:postgresql}. Names, values and user-info are percent-decoded by RFC 3986 ({@code +} stays {@code +}).
 *
 * <p>{@link dev.dedup.DedupStores#open(String)} {@linkplain #check checks} the URI against the provider's {@link UriParameters} before
 * calling the provider, so a provider reads only declared, validated values through the typed getters.
 *
 * @see Redaction for how the URI is shown in messages
 */
public final class StoreUri {
    /** The parameter every store has: the namespace its keys live in. */
    public static final String NAMESPACE = "namespace";

    private static final Pattern SCHEME = Pattern.compile("(?i)(jdbc:)?[a-z][a-z0-9+.-]*");
    private static final Pattern PORT = Pattern.compile("\\d{1,5}");
    /** A DNS name or IPv4 address (RFC 3986 reg-name without escapes), or what goes between an IPv6's brackets. */
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._~-]+");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]+(%[A-Za-z0-9._~-]+)?");
    private static final UriParameters NAMESPACE_ONLY = UriParameters.builder().build();

    private final String uri;
    private final String scheme;
    private final String location;
    private final Map<String, String> parameters;
    private final List<Map.Entry<String, String>> pairs;
    private final Set<String> repeated;
    private final String userInfo;
    private final String hostsText;
    private final String path;
    private final List<String> secrets;
    private final UriParameters declared;

    private StoreUri(StoreUri parsed, UriParameters declared) {
        this.uri = parsed.uri;
        this.scheme = parsed.scheme;
        this.location = parsed.location;
        this.parameters = parsed.parameters;
        this.pairs = parsed.pairs;
        this.repeated = parsed.repeated;
        this.userInfo = parsed.userInfo;
        this.hostsText = parsed.hostsText;
        this.path = parsed.path;
        this.secrets = parsed.secrets;
        this.declared = declared;
    }

    private StoreUri(String uri, String scheme, String location, List<Map.Entry<String, String>> pairs,
            Set<String> repeated, String userInfo, String hostsText, String path, List<String> secrets) {
        this.uri = uri;
        this.scheme = scheme;
        this.location = location;
        Map<String, String> byName = new LinkedHashMap<>();
        pairs.forEach(pair -> byName.put(pair.getKey(), pair.getValue()));
        this.parameters = Collections.unmodifiableMap(byName);
        this.pairs = List.copyOf(pairs);
        this.repeated = Set.copyOf(repeated);
        this.userInfo = userInfo;
        this.hostsText = hostsText;
        this.path = path;
        this.secrets = List.copyOf(secrets);
        this.declared = null;
    }

    /**
     * Parses {@code uri}; {@code properties} (may be empty) replace query parameters of the same name. Checks only
     * the syntax: the scheme and the percent-encoding. What the parameters mean is {@link #check}'s business.
     *
     * @param uri the store URI as the user wrote it, for example {@code redis://app:s3cret@cache:6379?namespace=orders}
     * @param properties parameters that replace the query's, or null or empty for none; their secret-named values
     *     join {@link #secrets()}
     * @return the parsed URI, not yet checked: its typed getters throw until {@link #check} has run
     * @throws DedupConfigurationException if the URI is null or blank, has no valid scheme, a nameless parameter or
     *     bad percent-encoding, or a property is null
     */
    public static StoreUri parse(String uri, Map<String, String> properties) {
        if (uri == null || uri.isBlank()) {
            throw new DedupConfigurationException("store URI must not be " + (uri == null ? "null" : "blank")
                    + "; expected for example memory:, postgresql://host/db, redis://host:6379");
        }
        String scheme = schemeOf(uri);
        String rest = uri.substring(scheme.length() + 1);
        int query = rest.indexOf('?');
        String location = query < 0 ? rest : rest.substring(0, query);
        List<String> secrets = new ArrayList<>();
        List<Map.Entry<String, String>> pairs = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        Set<String> repeated = new LinkedHashSet<>();
        if (query >= 0) {
            for (String pair : rest.substring(query + 1).split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String rawName = eq < 0 ? pair : pair.substring(0, eq);
                String name = decode(rawName, "a parameter name", uri);
                if (name.isEmpty()) {
                    throw new DedupConfigurationException("store URI " + Redaction.uri(uri) + " has a parameter"
                            + " without a name; write name=value pairs joined by &");
                }
                String rawValue = eq < 0 ? "" : pair.substring(eq + 1);
                String value = decode(rawValue, "parameter " + name, uri);
                if (Redaction.isSecretName(name)) {
                    secrets.add(rawValue);
                    secrets.add(value);
                }
                if (!seen.add(name)) {
                    repeated.add(name);
                }
                pairs.add(Map.entry(name, value));
            }
        }
        if (properties != null) {
            properties.forEach((name, value) -> {
                if (name == null || value == null) {
                    throw new DedupConfigurationException("store properties must not hold null names or values, but"
                            + " held " + name + "=" + (value == null ? "null" : Redaction.MASK));
                }
                if (Redaction.isSecretName(name)) {
                    secrets.add(value);
                }
                pairs.removeIf(pair -> pair.getKey().equals(name));
                repeated.remove(name);
                pairs.add(Map.entry(name, value));
            });
        }
        String userInfo = null;
        String hostsText = null;
        String path = null;
        if (location.startsWith("//")) {
            String authority = location.substring(2);
            // The last '@' ends the user-info, as in Redaction.uri: a password with an unescaped '@' stays whole.
            int at = authority.lastIndexOf('@');
            if (at >= 0) {
                userInfo = authority.substring(0, at);
                authority = authority.substring(at + 1);
                secrets.add(userInfo);
                String decoded = decode(userInfo, "the user-info", uri);
                secrets.add(decoded);
                int colon = userInfo.indexOf(':');
                secrets.add(decode(colon < 0 ? userInfo : userInfo.substring(colon + 1), "the user-info", uri));
            }
            int slash = authority.indexOf('/');
            hostsText = slash < 0 ? authority : authority.substring(0, slash);
            path = slash < 0 ? null : authority.substring(slash + 1);
        }
        return new StoreUri(uri, scheme, location, pairs, repeated, userInfo, hostsText, path, secrets);
    }

    /**
     * Reads the scheme of a URI without parsing the rest.
     *
     * @param uri a store URI
     * @return the scheme in lower case, {@code jdbc:} included: {@code jdbc:postgresql}
     * @throws DedupConfigurationException naming the URI, redacted, when it has no valid scheme
     */
    public static String schemeOf(String uri) {
        int colon = uri.indexOf(':');
        if (uri.regionMatches(true, 0, "jdbc:", 0, 5)) {
            colon = uri.indexOf(':', 5);
        }
        String scheme = colon < 0 ? "" : uri.substring(0, colon);
        if (!SCHEME.matcher(scheme).matches()) {
            throw new DedupConfigurationException("store URI " + Redaction.uri(uri) + " has no valid scheme; expected"
                    + " scheme:..., for example memory:, postgresql://host/db, redis://host:6379");
        }
        return scheme.toLowerCase(Locale.ROOT);
    }

    /**
     * Masks a URI for a message; see {@link Redaction#uri}.
     *
     * @param uri a store URI, possibly malformed, or null
     * @return {@code uri} with its user-info and secret parameters masked
     */
    public static String redact(String uri) {
        return Redaction.uri(uri);
    }

    /**
     * This URI checked against a provider's {@code declared} parameters: every name is one of the provider's own or
     * a driver parameter it passes through, and every own value is of its kind and within its bounds. Otherwise a
     * {@link DedupConfigurationException} names the parameter, what is allowed and, for a typo, the nearest name.
     *
     * @param declared the provider's {@link DedupStoreProvider#parameters()}
     * @return a checked copy whose typed getters read {@code declared}'s parameters; this URI is not changed
     * @throws DedupConfigurationException if a name is unknown, an own parameter is repeated, or a value is not
     *     allowed
     */
    public StoreUri check(UriParameters declared) {
        List<String> allowed = new ArrayList<>(declared.ownNames());
        allowed.addAll(declared.driverNames());
        for (Map.Entry<String, String> parameter : parameters.entrySet()) {
            String name = parameter.getKey();
            Optional<UriParameters.Parameter> own = declared.own(name);
            if (own.isPresent()) {
                if (repeated.contains(name)) {
                    throw new DedupConfigurationException("parameter " + name + " is given more than once in "
                            + redacted() + "; give it once");
                }
                parse(own.get(), parameter.getValue());
            } else if (!declared.isDriver(name)) {
                throw new DedupConfigurationException("unknown parameter '" + name + "' in " + redacted() + " for "
                        + scheme + ":." + Spelling.didYouMean(name, allowed) + " Allowed: "
                        + declared.describeAllowed() + ".");
            }
        }
        return new StoreUri(this, declared);
    }

    /** {@return the URI as given, credentials included. Do not log it: use {@link #redacted()}} */
    public String uri() {
        return uri;
    }

    /** {@return the URI with its user-info and secret parameters masked, for messages and logs} */
    public String redacted() {
        return Redaction.uri(uri);
    }

    /**
     * Every credential this URI and its properties hold (user-info, password, values of secret-named parameters),
     * raw and decoded, for {@link Redaction#scrub} of messages that may echo them.
     *
     * @return the secrets, unmodifiable; empty when the URI holds none
     */
    public List<String> secrets() {
        return secrets;
    }

    /** {@return the lower-case scheme, for example {@code redis} or {@code jdbc:postgresql}} */
    public String scheme() {
        return scheme;
    }

    /**
     * {@return what lies between {@code scheme:} and {@code ?}, for example {@code //host:6379/0}, not decoded. Do not
     * log it: it holds the user-info}
     */
    public String location() {
        return location;
    }

    /**
     * {@return the query parameters and properties (properties winning), decoded, by name in the order given; the
     * last value of a repeated name; unmodifiable}
     */
    public Map<String, String> parameters() {
        return parameters;
    }

    /**
     * Reads a parameter as given, unchecked; prefer the typed getters.
     *
     * @param name the parameter's name, exactly as written (case-sensitive)
     * @return the decoded value, empty when the parameter is not given (its default is not applied)
     */
    public Optional<String> parameter(String name) {
        return Optional.ofNullable(parameters.get(name));
    }

    /** {@return true when the URI has a user-info part ({@code user:password@} or {@code password@})} */
    public boolean hasUserInfo() {
        return userInfo != null;
    }

    /**
     * {@return the decoded user-info before its first {@code :}, or all of it when there is no {@code :}; empty
     * without user-info}
     */
    public Optional<String> user() {
        if (userInfo == null) {
            return Optional.empty();
        }
        int colon = userInfo.indexOf(':');
        return Optional.of(decode(colon < 0 ? userInfo : userInfo.substring(0, colon), "the user-info", uri));
    }

    /** {@return the decoded user-info after its first {@code :}; empty when there is no {@code :}} */
    public Optional<String> password() {
        if (userInfo == null || userInfo.indexOf(':') < 0) {
            return Optional.empty();
        }
        return Optional.of(decode(userInfo.substring(userInfo.indexOf(':') + 1), "the user-info", uri));
    }

    /**
     * {@return the hosts as written between the user-info and the path ({@code h1:5432,h2:5432}); empty without
     * {@code //}}
     */
    public Optional<String> hostsText() {
        return Optional.ofNullable(hostsText);
    }

    /** {@return the path after the hosts' {@code /}, as written (not decoded); empty when there is no {@code /}} */
    public Optional<String> path() {
        return Optional.ofNullable(path);
    }

    /**
     * Parses the hosts of the authority, for stores that take a host list.
     *
     * @return the hosts in the order written, each with its port or -1; unmodifiable, never empty
     * @throws DedupConfigurationException for no host, an empty or malformed host, or a port outside [1, 65535]
     */
    public List<HostPort> hosts() {
        if (hostsText == null || hostsText.isEmpty()) {
            throw new DedupConfigurationException("store URI " + redacted() + " names no host; expected " + scheme
                    + "://host:port");
        }
        List<HostPort> hosts = new ArrayList<>();
        for (String node : hostsText.split(",", -1)) {
            hosts.add(hostPort(node));
        }
        return List.copyOf(hosts);
    }

    /**
     * {@return the namespace: the {@code namespace} parameter, checked, or
     * {@link dev.dedup.DedupLimits#DEFAULT_NAMESPACE}; readable before {@link #check}}
     */
    public String namespace() {
        return (String) value(NAMESPACE);
    }

    /**
     * Reads a declared text parameter.
     *
     * @param name the parameter's name, as declared with {@link UriParameters.Builder#text}
     * @return its value, or its default; empty when neither exists
     * @throws IllegalArgumentException if the provider did not declare {@code name}
     * @throws IllegalStateException if this URI was not {@linkplain #check checked}
     */
    public Optional<String> text(String name) {
        return Optional.ofNullable((String) value(name));
    }

    /**
     * Reads a declared boolean parameter.
     *
     * @param name the parameter's name, as declared with {@link UriParameters.Builder#bool}
     * @return its value, or its default
     * @throws IllegalArgumentException if the provider did not declare {@code name}
     * @throws IllegalStateException if this URI was not {@linkplain #check checked}
     */
    public boolean bool(String name) {
        return (Boolean) value(name);
    }

    /**
     * Reads a declared integer parameter.
     *
     * @param name the parameter's name, as declared with {@link UriParameters.Builder#integer}
     * @return its value, within its declared bounds, or its default
     * @throws IllegalArgumentException if the provider did not declare {@code name}
     * @throws IllegalStateException if this URI was not {@linkplain #check checked}
     */
    public int integer(String name) {
        return (Integer) value(name);
    }

    /**
     * Reads a declared duration parameter.
     *
     * @param name the parameter's name, as declared with {@link UriParameters.Builder#duration}
     * @return its value, within its declared bounds, or its default; null when neither exists
     * @throws IllegalArgumentException if the provider did not declare {@code name}
     * @throws IllegalStateException if this URI was not {@linkplain #check checked}
     */
    public Duration duration(String name) {
        return (Duration) value(name);
    }

    /**
     * Reads a declared choice parameter.
     *
     * @param name the parameter's name, as declared with {@link UriParameters.Builder#choice}
     * @return its value, one of the declared choices, or its default; empty when neither exists
     * @throws IllegalArgumentException if the provider did not declare {@code name}
     * @throws IllegalStateException if this URI was not {@linkplain #check checked}
     */
    public Optional<String> choice(String name) {
        return Optional.ofNullable((String) value(name));
    }

    /**
     * Reads a declared http(s) URL parameter.
     *
     * @param name the parameter's name, as declared with {@link UriParameters.Builder#httpUrl}
     * @return its value, an absolute http or https URL with a host; empty when not given
     * @throws IllegalArgumentException if the provider did not declare {@code name}
     * @throws IllegalStateException if this URI was not {@linkplain #check checked}
     */
    public Optional<URI> httpUrl(String name) {
        return Optional.ofNullable((URI) value(name));
    }

    /**
     * The driver parameters to pass through, in the order given, repeated names kept (MongoDB's
     * {@code readPreferenceTags} may repeat). Only on a {@linkplain #check checked} URI.
     *
     * @return name and decoded value of every given parameter that is not the provider's own; a new list
     * @throws IllegalStateException if this URI was not {@linkplain #check checked}
     */
    public List<Map.Entry<String, String>> driverParameters() {
        UriParameters checkedAgainst = checked();
        List<Map.Entry<String, String>> driver = new ArrayList<>();
        for (Map.Entry<String, String> pair : pairs) {
            if (checkedAgainst.own(pair.getKey()).isEmpty()) {
                driver.add(pair);
            }
        }
        return driver;
    }

    @Override
    public String toString() {
        return redacted();
    }

    private Object value(String name) {
        UriParameters checkedAgainst = name.equals(NAMESPACE) && declared == null ? NAMESPACE_ONLY : checked();
        UriParameters.Parameter parameter = checkedAgainst.own(name).orElseThrow(() -> new IllegalArgumentException(
                "parameter " + name + " is not among the provider's declared parameters " + checkedAgainst.ownNames()));
        String value = parameters.get(name);
        return value == null ? parameter.defaultValue() : parse(parameter, value);
    }

    private UriParameters checked() {
        if (declared == null) {
            throw new IllegalStateException("StoreUri " + redacted() + " was not checked against the provider's"
                    + " parameters; call check(provider.parameters()) first (DedupStores.open does)");
        }
        return declared;
    }

    private Object parse(UriParameters.Parameter parameter, String value) {
        try {
            return parameter.parse(value);
        } catch (IllegalArgumentException e) {
            String shown = Redaction.isSecretName(parameter.name()) ? Redaction.MASK : value;
            throw new DedupConfigurationException("parameter " + parameter.name() + "=" + shown + " in "
                    + redacted() + ": " + e.getMessage(), e);
        }
    }

    private HostPort hostPort(String node) {
        String host;
        String port = null;
        if (node.startsWith("[")) {
            int close = node.indexOf(']');
            if (close < 0 || (close + 1 < node.length() && node.charAt(close + 1) != ':')) {
                throw badHost(node, "an IPv6 address goes in brackets, then an optional :port: [::1]:6379");
            }
            host = node.substring(1, close);
            port = close + 1 < node.length() ? node.substring(close + 2) : null;
        } else {
            int colon = node.indexOf(':');
            host = colon < 0 ? node : node.substring(0, colon);
            port = colon < 0 ? null : node.substring(colon + 1);
        }
        if (host.isEmpty()) {
            throw badHost(node, "the host is empty; expected host or host:port, several separated by commas");
        }
        if (!(node.startsWith("[") ? IPV6 : HOST).matcher(host).matches()) {
            throw badHost(node, "a host is letters, digits, '.', '-', '_' and '~', or an IPv6 address in brackets");
        }
        if (port == null) {
            return new HostPort(host, -1);
        }
        int number = PORT.matcher(port).matches() ? Integer.parseInt(port) : 0;
        if (number < 1 || number > 65_535) {
            throw badHost(node, "the port '" + port + "' must be a whole number in [1, 65535]");
        }
        return new HostPort(host, number);
    }

    private DedupConfigurationException badHost(String node, String why) {
        return new DedupConfigurationException("host '" + node + "' in " + redacted() + ": " + why);
    }

    private static String decode(String text, String what, String uri) {
        try {
            return PercentCoding.decode(text);
        } catch (IllegalArgumentException e) {
            throw new DedupConfigurationException(what + " in " + Redaction.uri(uri) + " is not valid: "
                    + e.getMessage());
        }
    }

    /**
     * A host and its port, -1 when the URI gives none; an IPv6 host without its brackets.
     *
     * @param host a DNS name, an IPv4 address, or an IPv6 address without brackets (with any {@code %zone})
     * @param port the port in [1, 65535], or -1 when the URI gives none
     */
    public record HostPort(String host, int port) {
        /**
         * Applies the store's default port.
         *
         * @param defaultPort the port to use when the URI gives none, such as 6379 for Redis
         * @return the URI's port, or {@code defaultPort} when the URI gives none
         */
        public int portOr(int defaultPort) {
            return port < 0 ? defaultPort : port;
        }

        /** {@code host:port} as a URI writes it, IPv6 in brackets. */
        @Override
        public String toString() {
            String shown = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
            return port < 0 ? shown : shown + ":" + port;
        }
    }
}
