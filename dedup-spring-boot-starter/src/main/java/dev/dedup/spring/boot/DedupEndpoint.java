package dev.dedup.spring.boot;

import dev.dedup.DedupStore;
import dev.dedup.KeyRecord;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code dedup} actuator endpoint, for operators: {@code GET /actuator/dedup/{key}} shows what the store holds
 * for one key (404 when nothing live), {@code DELETE /actuator/dedup/{key}} forgets it, so the next message or
 * request under that key runs again. Keys are the stored ones: an {@link Idempotent} method's {@code scope:key}, the
 * HTTP filter's scoped key. Like every actuator endpoint it is exposed only when the application says so
 * ({@code management.endpoints.web.exposure.include=dedup}), and belongs behind the actuator's security.
 *
 * <p>It never shows the owner token (with it a caller could complete another's claim), only a digest that tells
 * owners apart, nor the stored result (a response body may hold personal data), only its size.
 */
@Endpoint(id = "dedup")
public class DedupEndpoint {
    private final DedupStore store;

    /**
     * Creates the endpoint on the application's store.
     *
     * @param store the store whose keys it reads and forgets
     */
    public DedupEndpoint(DedupStore store) {
        this.store = store;
    }

    /**
     * Reads one key's live record.
     *
     * @param key the stored key
     * @return the record's view, or null (404) when the store holds nothing live under the key
     */
    @ReadOperation
    public KeyView key(@Selector String key) {
        return store.inspect(key).map(record -> KeyView.of(store.namespace(), record)).orElse(null);
    }

    /**
     * Forgets one key, whatever its state: the next claim wins, and a running owner's completion is refused.
     *
     * @param key the stored key
     * @return whether a live record was removed
     */
    @DeleteOperation
    public Forgotten forget(@Selector String key) {
        return new Forgotten(store.namespace(), key, store.forget(key));
    }

    /**
     * What the endpoint shows of a record.
     *
     * @param namespace the store's namespace
     * @param key the stored key
     * @param state {@code IN_PROGRESS}, {@code COMPLETED} or {@code FAILED}
     * @param expiresAt when the lease (in progress) or the retention (completed, failed) ends
     * @param ownerDigest the first 16 hex digits of the owner token's SHA-256, or null
     * @param fingerprint the stored payload fingerprint in hex, or null
     * @param resultBytes the size of the stored result or failure description, or null for none
     */
    public record KeyView(String namespace, String key, String state, Instant expiresAt, String ownerDigest,
            String fingerprint, Integer resultBytes) {
        static KeyView of(String namespace, KeyRecord record) {
            byte[] fingerprint = record.fingerprint();
            byte[] result = record.result();
            return new KeyView(namespace, record.key(), record.state().name(), record.expiresAt(),
                    digest(record.owner()), fingerprint == null ? null : HexFormat.of().formatHex(fingerprint),
                    result == null ? null : result.length);
        }

        private static String digest(String owner) {
            if (owner == null) {
                return null;
            }
            try {
                byte[] hash = MessageDigest.getInstance("SHA-256").digest(owner.getBytes(StandardCharsets.UTF_8));
                return HexFormat.of().formatHex(hash, 0, 8);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("every Java platform has SHA-256", e);
            }
        }
    }

    /**
     * What a forget answers.
     *
     * @param namespace the store's namespace
     * @param key the stored key
     * @param forgotten true when a live record was removed, false when there was none
     */
    public record Forgotten(String namespace, String key, boolean forgotten) {}
}
