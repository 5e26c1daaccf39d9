package dev.dedup;

import java.time.Instant;
import java.util.Objects;

/**
 * A won claim: the caller holds {@code key} in {@code namespace} until {@code expiresAt}.
 *
 * <p>{@code owner} is a fresh random token; complete, release and extend succeed only while the stored record still
 * carries it, so a consumer whose lease lapsed can never overwrite the record of the consumer that took over.
 */
public record Claim(String namespace, String key, String owner, Instant expiresAt) implements ClaimResult {
    public Claim {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }
}
