package dev.dedup;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The limits every store accepts, and the one place they are checked. A store never sees input that breaks them,
 * so every backend rejects bad input alike, before anything is written.
 */
public final class DedupLimits {

    /** Longest key, counted in UTF-8 bytes: well inside DynamoDB's 2048-byte partition key and B-tree index rows. */
    public static final int MAX_KEY_BYTES = 512;

    /** Largest stored result: leaves room under DynamoDB's 400 KB item limit. */
    public static final int MAX_RESULT_BYTES = 256 * 1024;

    /** Longest payload fingerprint: room for a SHA-512 digest; a SHA-256 digest takes 32 bytes. */
    public static final int MAX_FINGERPRINT_BYTES = 64;

    /** Most keys in one {@code claimAll} call. */
    public static final int MAX_BATCH_KEYS = 1000;

    /** Shortest lease or retention: backends count in milliseconds. */
    public static final Duration MIN_DURATION = Duration.ofMillis(1);

    /** Longest lease or retention; anything longer is almost surely a unit mistake. */
    public static final Duration MAX_DURATION = Duration.ofDays(366);

    /** Namespace syntax: it prefixes keys on every backend, so it must not contain separators. */
    public static final Pattern NAMESPACE_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /** The namespace used when none is given. */
    public static final String DEFAULT_NAMESPACE = "default";

    private static final int SHOWN_CHARS = 40;

    private DedupLimits() {}

    /**
     * Checks a key: not null, not blank, valid Unicode, no NUL, at most {@link #MAX_KEY_BYTES} in UTF-8.
     *
     * @param key the key to check, without namespace
     * @return {@code key} itself, so a check can wrap an argument in place
     * @throws IllegalArgumentException if the key breaks a limit; the message names the limit and shows the key, cut
     *     to 40 characters
     */
    public static String checkKey(String key) {
        if (key == null) {
            throw new IllegalArgumentException("key must not be null; allowed: a non-blank string of at most "
                    + MAX_KEY_BYTES + " UTF-8 bytes");
        }
        if (key.isBlank()) {
            throw new IllegalArgumentException("key must not be blank, but was " + show(key)
                    + "; allowed: a non-blank string of at most " + MAX_KEY_BYTES + " UTF-8 bytes");
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == '\0') {
                throw new IllegalArgumentException("key must not contain U+0000 (NUL), found at index " + i
                        + " of " + show(key) + "; PostgreSQL text cannot store it");
            }
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("key must be valid Unicode, but has an unpaired surrogate at index "
                        + i + " of " + show(key));
            }
        }
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("key must be at most " + MAX_KEY_BYTES + " UTF-8 bytes, but was "
                    + bytes + " bytes: " + show(key) + "; shorten it with DedupKeys.fit(key) or DedupKeys.hash(key)");
        }
        return key;
    }

    /**
     * Checks a lease or retention: between {@link #MIN_DURATION} and {@link #MAX_DURATION}.
     *
     * @param name what the duration is, for the message, such as {@code "lease"} or {@code "retention"}
     * @param duration the duration to check
     * @return {@code duration} itself
     * @throws IllegalArgumentException if {@code duration} is null or out of range
     */
    public static Duration checkDuration(String name, Duration duration) {
        if (duration == null) {
            throw new IllegalArgumentException(name + " must not be null; allowed: " + durationRange());
        }
        if (duration.compareTo(MIN_DURATION) < 0 || duration.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(name + " must be in " + durationRange() + ", but was " + duration);
        }
        return duration;
    }

    /**
     * Checks an optional result: null (no result) or at most {@link #MAX_RESULT_BYTES}.
     *
     * @param result the serialized result or error payload, or null for none
     * @return {@code result} itself, not copied
     * @throws IllegalArgumentException if {@code result} is longer than {@link #MAX_RESULT_BYTES}
     */
    public static byte[] checkResult(byte[] result) {
        if (result != null && result.length > MAX_RESULT_BYTES) {
            throw new IllegalArgumentException("result must be at most " + MAX_RESULT_BYTES + " bytes, but was "
                    + result.length + " bytes");
        }
        return result;
    }

    /**
     * Checks an optional payload fingerprint: null (none) or 1 to {@link #MAX_FINGERPRINT_BYTES} bytes.
     *
     * @param fingerprint the digest of the message's content to store with a claim, or null for none
     * @return {@code fingerprint} itself, not copied
     * @throws IllegalArgumentException if {@code fingerprint} is empty or longer than {@link #MAX_FINGERPRINT_BYTES}
     */
    public static byte[] checkFingerprint(byte[] fingerprint) {
        if (fingerprint != null && (fingerprint.length == 0 || fingerprint.length > MAX_FINGERPRINT_BYTES)) {
            throw new IllegalArgumentException("fingerprint must be 1 to " + MAX_FINGERPRINT_BYTES
                    + " bytes (MAX_FINGERPRINT_BYTES), or null for none, but was " + fingerprint.length
                    + " bytes; store a digest of the payload, such as its SHA-256");
        }
        return fingerprint;
    }

    /**
     * Checks a batch of keys: not null, 0 to {@link #MAX_BATCH_KEYS} keys, each a valid key.
     *
     * @param keys the batch for one {@code claimAll} call; duplicates are allowed
     * @return {@code keys} itself, not copied
     * @throws IllegalArgumentException if the batch is null or too long, or a key is invalid; the message starts with
     *     the bad key's index, such as {@code keys[3]:}
     */
    public static List<String> checkKeys(List<String> keys) {
        if (keys == null) {
            throw new IllegalArgumentException("keys must not be null; allowed: a list of 0 to " + MAX_BATCH_KEYS
                    + " keys");
        }
        if (keys.size() > MAX_BATCH_KEYS) {
            throw new IllegalArgumentException("keys must hold at most " + MAX_BATCH_KEYS + " keys, but held "
                    + keys.size() + "; split the batch");
        }
        for (int i = 0; i < keys.size(); i++) {
            try {
                checkKey(keys.get(i));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("keys[" + i + "]: " + e.getMessage(), e);
            }
        }
        return keys;
    }

    /**
     * Checks that {@code claim} is a claim of the store with {@code namespace}.
     *
     * @param namespace the store's namespace
     * @param claim the claim passed to the store
     * @return {@code claim} itself
     * @throws IllegalArgumentException if {@code claim} is null or of another namespace
     */
    public static Claim checkClaim(String namespace, Claim claim) {
        if (claim == null) {
            throw new IllegalArgumentException("claim must not be null; pass the Claim that claim() returned");
        }
        if (!claim.namespace().equals(namespace)) {
            throw new IllegalArgumentException("claim belongs to namespace '" + claim.namespace()
                    + "', but this store's namespace is '" + namespace + "'");
        }
        return claim;
    }

    /**
     * Checks a batch of settlements: not null, 0 to {@link #MAX_BATCH_KEYS} of them, each of a claim of the store
     * with {@code namespace}, a valid retention and payload, and no key settled twice.
     *
     * @param namespace the store's namespace
     * @param settlements the batch for one {@code settleAll} call
     * @return {@code settlements} itself, not copied
     * @throws IllegalArgumentException if the batch is null or too long, an entry is invalid, or a key repeats; the
     *     message starts with the bad entry's index, such as {@code settlements[3]:}
     */
    public static List<Settlement> checkSettlements(String namespace, List<Settlement> settlements) {
        if (settlements == null) {
            throw new IllegalArgumentException("settlements must not be null; allowed: a list of 0 to "
                    + MAX_BATCH_KEYS + " settlements");
        }
        if (settlements.size() > MAX_BATCH_KEYS) {
            throw new IllegalArgumentException("settlements must hold at most " + MAX_BATCH_KEYS + ", but held "
                    + settlements.size() + "; split the batch");
        }
        Map<String, Integer> indexByKey = new HashMap<>();
        for (int i = 0; i < settlements.size(); i++) {
            try {
                checkSettlement(namespace, settlements.get(i));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("settlements[" + i + "]: " + e.getMessage(), e);
            }
            Integer first = indexByKey.putIfAbsent(settlements.get(i).claim().key(), i);
            if (first != null) {
                throw new IllegalArgumentException("settlements[" + i + "]: key "
                        + show(settlements.get(i).claim().key()) + " is settled twice in one batch (first at"
                        + " settlements[" + first + "]); a key has one claim, settled once");
            }
        }
        return settlements;
    }

    private static void checkSettlement(String namespace, Settlement settlement) {
        if (settlement == null) {
            throw new IllegalArgumentException("settlement must not be null; make one with Settlement.complete,"
                    + " fail or release");
        }
        checkClaim(namespace, settlement.claim());
        if (settlement.kind() != Settlement.Kind.RELEASE) {
            checkDuration("retention", settlement.retention());
            checkResult(settlement.payloadUncopied());
        }
    }

    /**
     * Checks a namespace against {@link #NAMESPACE_PATTERN}.
     *
     * @param namespace the namespace to check
     * @return {@code namespace} itself
     * @throws IllegalArgumentException if {@code namespace} is null or does not match
     */
    public static String checkNamespace(String namespace) {
        if (namespace == null || !NAMESPACE_PATTERN.matcher(namespace).matches()) {
            throw new IllegalArgumentException("namespace must be 1 to 64 characters of A-Z a-z 0-9 . _ -, but was "
                    + (namespace == null ? "null" : show(namespace)));
        }
        return namespace;
    }

    private static String durationRange() {
        return "[" + MIN_DURATION + ", " + MAX_DURATION + "] (1 ms to 366 days)";
    }

    /** Quotes a value for an error message, cut short so a huge key does not flood the log. */
    static String show(String value) {
        String escaped = value.replace("\0", "\\0");
        return escaped.length() <= SHOWN_CHARS
                ? "'" + escaped + "'"
                : "'" + escaped.substring(0, SHOWN_CHARS) + "…' (" + value.length() + " chars)";
    }
}
