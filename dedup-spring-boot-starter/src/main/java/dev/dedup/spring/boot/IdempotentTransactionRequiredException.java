package dev.dedup.spring.boot;

import dev.dedup.DedupConfigurationException;

/**
 * An {@code @Idempotent(inTransaction = true)} method was called where no transaction can hold its claim: outside any
 * Spring transaction, or inside a read-only one. The method did not run. The fix is in the code that calls it: run the
 * call in a read-write transaction ({@code @Transactional} on the method or on its caller, or a
 * {@code TransactionTemplate}).
 */
public final class IdempotentTransactionRequiredException extends DedupConfigurationException {
    private static final long serialVersionUID = 1L;

    IdempotentTransactionRequiredException(String message) {
        super(message);
    }
}
