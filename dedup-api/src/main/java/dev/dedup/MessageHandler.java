package dev.dedup;

/**
 * The business work for one message; may throw, which the consumer reports as {@link ProcessingOutcome.Failed}.
 *
 * @param <M> the message type
 * @param <R> the result type; {@link Void} for handlers that return nothing ({@code return null})
 */
@FunctionalInterface
public interface MessageHandler<M, R> {
    /**
     * Does the work for one message, at most once per key while its record lives.
     *
     * @param message the delivered message
     * @return the result to store for duplicates (through the consumer's {@link ResultCodec}), or null for none
     * @throws Exception any failure; the claim is released for a redelivery unless the consumer keeps the key
     */
    R handle(M message) throws Exception;
}
