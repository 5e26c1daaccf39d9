package dev.dedup.rabbitmq;

/**
 * Thrown where a crashed process would simply have stopped, so nothing after it runs. An {@link Error}:
 * {@code IdempotentConsumer} releases the claim and rethrows it, which frees the key at once, as a lapsed lease would
 * after a real crash.
 */
final class Halt extends Error {
    private static final long serialVersionUID = 1L;

    Halt() {
        super("simulated crash", null, false, false);
    }
}
