package dev.dedup;

/** The business work for one message; may throw, which the consumer reports as {@link ProcessingOutcome.Failed}. */
@FunctionalInterface
public interface MessageHandler<M, R> {
    R handle(M message) throws Exception;
}
