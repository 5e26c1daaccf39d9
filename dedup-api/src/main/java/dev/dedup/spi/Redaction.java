package dev.dedup.spi;

import dev.dedup.DedupConfigurationException;
import dev.dedup.DedupException;
import dev.dedup.DedupStoreException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one place that keeps credentials out of messages and logs: store URIs are shown with their whole user-info and
 * every secret-named parameter masked, and exceptions are cleaned of any secret a driver may have echoed.
 */
public final class Redaction {
    /** What replaces a secret. */
    public static final String MASK = "***";

    private static final List<String> SECRET_WORDS = List.of("pass", "secret", "token", "key");
    private static final int MAX_CAUSES = 32;
    /** The user-info of a URI inside a message, as a driver prints it: {@code redis://app:*****@host}. */
    private static final Pattern EMBEDDED_USER_INFO = Pattern.compile("//([^\\s/?#@\\[\\]]+)@");

    private Redaction() {}

    /**
     * Tells whether a parameter's value is a credential, judged by its name alone.
     *
     * @param name a query parameter's name, decoded
     * @return true when the name contains pass, secret, token or key, in any case: {@code password},
     *     {@code sessionToken}, {@code awsSecretAccessKey}
     */
    public static boolean isSecretName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        for (String word : SECRET_WORDS) {
            if (lower.contains(word)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code uri} with the whole user-info ({@code redis://***@host}) and the value of every secret-named parameter
     * ({@code ?password=***}) masked, for any scheme. The user-info runs to the last {@code @} before the query, so a
     * password with an unescaped {@code @}, {@code /} or {@code :} is still masked whole.
     *
     * @param uri a store URI as the user wrote it, possibly malformed, or null
     * @return the URI safe to show in a message or log; {@code "null"} for null
     */
    public static String uri(String uri) {
        if (uri == null) {
            return "null";
        }
        int query = uri.indexOf('?');
        String head = query < 0 ? uri : uri.substring(0, query);
        int at = head.lastIndexOf('@');
        if (at >= 0) {
            int slashes = head.indexOf("//");
            int start = slashes >= 0 && slashes < at ? slashes + 2 : head.indexOf(':') + 1;
            head = head.substring(0, start) + MASK + head.substring(at);
        }
        if (query < 0) {
            return head;
        }
        StringBuilder redacted = new StringBuilder(head).append('?');
        String[] pairs = uri.substring(query + 1).split("&", -1);
        for (int i = 0; i < pairs.length; i++) {
            String pair = pairs[i];
            int eq = pair.indexOf('=');
            String name = eq < 0 ? pair : pair.substring(0, eq);
            if (i > 0) {
                redacted.append('&');
            }
            if (eq >= 0 && isSecretName(PercentCoding.decodeLeniently(name))) {
                redacted.append(name).append('=').append(MASK);
            } else {
                redacted.append(pair);
            }
        }
        return redacted.toString();
    }

    /**
     * {@code text} with the user-info of any URI in it masked (drivers print URIs their own way, for example Lettuce's
     * {@code redis://app:*****@host} shows the user and the password's length) and every occurrence of each of
     * {@code secrets} replaced by {@link #MASK}.
     *
     * @param text a message, or null
     * @param secrets the exact strings to mask, such as the URI's decoded password and its encoded form; nulls and
     *     empty strings are ignored
     * @return the cleaned text, or null for null
     */
    public static String scrub(String text, Collection<String> secrets) {
        if (text == null) {
            return null;
        }
        String scrubbed = EMBEDDED_USER_INFO.matcher(text).replaceAll("//" + Matcher.quoteReplacement(MASK) + "@");
        for (String secret : longestFirst(secrets)) {
            scrubbed = scrubbed.replace(secret, MASK);
        }
        return scrubbed;
    }

    /**
     * {@code failure} itself when no message in it or its causes holds one of {@code secrets}; otherwise an exception
     * of the same dedup kind (configuration or store error, retryable or not) whose message and causes are cleaned.
     * A cleaned cause keeps the original's class name in its message and its stack trace.
     *
     * @param failure the exception to check, with its causes and suppressed exceptions
     * @param secrets the exact strings to mask; nulls and empty strings are ignored
     * @return {@code failure}, or a cleaned replacement to throw instead
     */
    public static RuntimeException scrub(RuntimeException failure, Collection<String> secrets) {
        List<String> ordered = longestFirst(secrets);
        if (!holdsSecret(failure, ordered)) {
            return failure;
        }
        String message = scrub(failure.getMessage(), ordered);
        Throwable cause = clean(failure.getCause(), ordered, Collections.newSetFromMap(new IdentityHashMap<>()));
        RuntimeException cleaned;
        if (failure instanceof DedupStoreException store) {
            cleaned = new DedupStoreException(message, cause, store.isRetryable());
        } else if (failure instanceof DedupConfigurationException) {
            cleaned = new DedupConfigurationException(message, cause);
        } else if (failure instanceof DedupException) {
            cleaned = new DedupException(message, cause);
        } else {
            cleaned = new RedactedException(failure, message, cause);
        }
        cleaned.setStackTrace(failure.getStackTrace());
        return cleaned;
    }

    private static Throwable clean(Throwable failure, List<String> secrets, Set<Throwable> seen) {
        if (failure == null || !seen.add(failure) || seen.size() > MAX_CAUSES) {
            return null;
        }
        if (!holdsSecret(failure, secrets)) {
            return failure;
        }
        RedactedException cleaned = new RedactedException(failure, scrub(failure.getMessage(), secrets),
                clean(failure.getCause(), secrets, seen));
        cleaned.setStackTrace(failure.getStackTrace());
        for (Throwable suppressed : failure.getSuppressed()) {
            Throwable cleanSuppressed = clean(suppressed, secrets, seen);
            if (cleanSuppressed != null) {
                cleaned.addSuppressed(cleanSuppressed);
            }
        }
        return cleaned;
    }

    private static boolean holdsSecret(Throwable failure, List<String> secrets) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Throwable> pending = new ArrayList<>(List.of(failure));
        while (!pending.isEmpty()) {
            Throwable each = pending.remove(pending.size() - 1);
            if (each == null || !seen.add(each) || seen.size() > MAX_CAUSES) {
                continue;
            }
            String text = each.getMessage();
            if (text != null) {
                Matcher userInfo = EMBEDDED_USER_INFO.matcher(text);
                while (userInfo.find()) {
                    if (!userInfo.group(1).equals(MASK)) {
                        return true;
                    }
                }
                for (String secret : secrets) {
                    if (text.contains(secret)) {
                        return true;
                    }
                }
            }
            pending.add(each.getCause());
            pending.addAll(List.of(each.getSuppressed()));
        }
        return false;
    }

    // Longest first, so that a secret containing a shorter one is masked whole.
    private static List<String> longestFirst(Collection<String> secrets) {
        List<String> ordered = new ArrayList<>();
        for (String secret : secrets) {
            if (secret != null && !secret.isEmpty() && !ordered.contains(secret)) {
                ordered.add(secret);
            }
        }
        ordered.sort((a, b) -> Integer.compare(b.length(), a.length()));
        return ordered;
    }

    /** Stands in for a driver exception whose message held a secret: its class name, the cleaned message. */
    public static final class RedactedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** The fully qualified class name of the exception this one replaces. */
        private final String originalClass;

        RedactedException(Throwable original, String message, Throwable cause) {
            super(original.getClass().getName() + (message == null ? "" : ": " + message), cause);
            this.originalClass = original.getClass().getName();
        }

        /** {@return the fully qualified class name of the exception this one replaces} */
        public String originalClass() {
            return originalClass;
        }
    }
}
