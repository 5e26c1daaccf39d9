package dev.dedup;

import java.time.Instant;
import java.util.Objects;

/**
 * A won claim: the caller holds {@code key} in {@code namespace} until {@code expiresAt}.
 *
 * <p>{@code owner} is a fresh random token; complete, release and extend succeed only while the stored record still
 * carries it, so a consumer whose lease lapsed can never overwrite the record of the consumer that took over.
 *
 * @param namespace the namespace of the store that granted the claim
 * @param key the key as the caller gave it, without namespace
 * @param owner the random token that proves this claim is the caller's; never shown to other callers
 * @param expiresAt when the lease ends, by the store's clock, unless extended
 */
public record Claim(String namespace, String key, String owner, Instant expiresAt) implements ClaimResult {
    /**
     * Checks that no component is null; stores create claims, applications only pass them back.
     *
     * @param namespace the namespace of the store that granted the claim
     * @param key the key as the caller gave it, without namespace
     * @param owner the random token that proves this claim is the caller's
     * @param expiresAt when the lease ends, by the store's clock, unless extended
     */
    public Claim {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }
}
