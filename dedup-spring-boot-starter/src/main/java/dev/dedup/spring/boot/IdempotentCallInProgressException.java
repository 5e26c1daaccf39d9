package dev.dedup.spring.boot;

import java.time.Instant;

/**
 * Another call holds the key and is still running: retry after {@link #leaseExpiresAt()} at the latest, when the
 * result is stored or the claim can be taken over. A listener container's retry (Spring Kafka's error handler,
 * a RabbitMQ requeue) does exactly that.
 */
public final class IdempotentCallInProgressException extends IdempotentCallException {
    private static final long serialVersionUID = 1L;

    /** When the running call's lease ends. */
    private final Instant leaseExpiresAt;

    IdempotentCallInProgressException(String key, Instant leaseExpiresAt) {
        super(key, "another call is still running under key '" + key + "'; its lease ends at " + leaseExpiresAt);
        this.leaseExpiresAt = leaseExpiresAt;
    }

    /** {@return when the running call's lease ends, unless its heartbeats renew it} */
    public Instant leaseExpiresAt() {
        return leaseExpiresAt;
    }
}
